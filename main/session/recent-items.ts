// The recently opened engines and bundles, kept in a small JSON file so the app can offer them
// again next time. The file is the user's (and anyone's who can write there): it is parsed with
// zod, and a file that is not what this module writes is ignored — reported, never fatal.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { createOutputFolderSync } from '../core/io/output-folder.ts';
import { GuardedReadError, readRegularFileSync } from '../core/io/guarded-read.ts';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** The recent list is a few KiB of JSON; anything far larger is not ours. */
const MAX_RECENT_FILE_BYTES = 1024 * 1024;

export const RECENT_SCHEMA = 'trace-inspector.recent';
/** Entries kept per list; the oldest fall off. */
export const RECENT_LIMIT = 10;

const RecentFileSchema = z.strictObject({
  schema: z.literal(RECENT_SCHEMA),
  schema_version: z.literal(1),
  engines: z.array(z.string().min(1)).max(100),
  bundles: z.array(z.string().min(1)).max(100),
});
type RecentFile = z.infer<typeof RecentFileSchema>;

export type RecentKind = 'engines' | 'bundles';

export class RecentItems {
  private engines: string[] = [];
  private bundles: string[] = [];

  private constructor(private readonly file: string | null) {}

  /**
   * Reads `file` (null: keep the list in memory only). A missing file is an empty list; an
   * unreadable or malformed one is ignored and `onProblem` says why (the file is rewritten,
   * valid, on the next remember()).
   */
  static load(file: string | null, onProblem: (message: string) => void): RecentItems {
    const items = new RecentItems(file);
    if (file === null) return items;
    let text: string;
    try {
      text = readRegularFileSync(file, MAX_RECENT_FILE_BYTES).toString('utf8');
    } catch (error) {
      if (!(error instanceof GuardedReadError)) throw error;
      if (error.problem !== 'missing') onProblem(`${file}: ${error.reason}; the recent items start empty`);
      return items;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      onProblem(`${file}: (root): not valid JSON (${(error as Error).message}); the recent items were ignored`);
      return items;
    }
    const parsed = RecentFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
      onProblem(`${file}: ${field}: ${issue?.message ?? 'invalid'}; the recent items were ignored`);
      return items;
    }
    items.engines = parsed.data.engines.slice(0, RECENT_LIMIT);
    items.bundles = parsed.data.bundles.slice(0, RECENT_LIMIT);
    return items;
  }

  list(): { engines: string[]; bundles: string[] } {
    return { engines: [...this.engines], bundles: [...this.bundles] };
  }

  /** Moves `path` to the front of its list and saves; returns why saving failed, or null. */
  remember(kind: RecentKind, path: string): string | null {
    const list = kind === 'engines' ? this.engines : this.bundles;
    const at = list.indexOf(path);
    if (at !== -1) list.splice(at, 1);
    list.unshift(path);
    list.splice(RECENT_LIMIT);
    return this.save();
  }

  private save(): string | null {
    if (this.file === null) return null;
    const content: RecentFile = { schema: RECENT_SCHEMA, schema_version: 1, engines: this.engines, bundles: this.bundles };
    // Written aside and renamed, so a reader never sees half a file.
    const temp = `${this.file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      createOutputFolderSync(dirname(this.file), 'the folder of the recent list');
      writeFileSync(temp, `${JSON.stringify(content, null, 2)}\n`, { flag: 'wx' });
      renameSync(temp, this.file);
      return null;
    } catch (error) {
      rmSync(temp, { force: true });
      return `${this.file}: cannot save the recent items (${(error as Error).message})`;
    }
  }
}
