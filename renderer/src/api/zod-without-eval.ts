// zod 4 compiles fast object parsers with `new Function` unless told not to. The renderer runs
// under a CSP without 'unsafe-eval', where that probe is a reported violation: parse without JIT.
// Imported first by main.tsx, before any schema parses anything.
import { z } from 'zod';

z.config({ jitless: true });
