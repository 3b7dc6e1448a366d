// Bad input, whichever command or app call met it: a flag, a file the user named (and the field
// in it), a bundle that cannot be used as asked, a work folder in the way. One class for all of
// them, so every entry point treats bad input alike: the CLI prints the message and exits 2, the
// app answers the call with it, and nothing is judged or written.
export class InputError extends Error {
  override name = 'InputError';
  /** The file at fault and the field in it, when the problem is inside a file the user named. */
  readonly file: string | null;
  readonly field: string | null;

  /** `cause`: what was met underneath (an engine's refusal), so a caller can still tell them apart. */
  constructor(message: string, where: { file: string; field: string } | null = null, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.file = where?.file ?? null;
    this.field = where?.field ?? null;
  }

  /** A problem at `field` of `file`; the message reads "<file>: <field>: <detail>". */
  static at(file: string, field: string, detail: string): InputError {
    return new InputError(`${file}: ${field}: ${detail}`, { file, field });
  }

  /** The same problem with where it was met in front ("--gate", "case speech"), file and field kept. */
  within(context: string): InputError {
    return new InputError(`${context}: ${this.message}`, this.file === null || this.field === null ? null : { file: this.file, field: this.field }, this.cause);
  }
}
