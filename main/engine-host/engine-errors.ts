// Errors the engine host raises. Each names what is at fault (the library path and the symbol
// or describe() field; the engine call and the engine's own message; the pass and the last
// boundary of a crash) so a user can act on it without reading the source.

/** Why a library could not be used as an engine. */
export type EngineLoadFailure =
  | 'missing_file' // the path does not exist
  | 'not_regular_file' // a folder, a device...
  | 'not_shared_library' // dlopen refused it
  | 'missing_symbol' // a ti_* function is not exported
  | 'abi_version' // ti_abi_version() is not the version this host speaks
  | 'describe_json' // ti_describe() is not JSON
  | 'describe_schema' // ti_describe() JSON breaks the catalogue schema
  | 'load_crashed' // loading it killed the engine host (a load-time constructor crashed, ...)
  | 'load_timeout'; // loading it did not finish within the watchdog (a load-time constructor hangs, ...)

export interface EngineLoadErrorFields {
  readonly library: string;
  readonly failure: EngineLoadFailure;
  /** The exported symbol at fault (`ti_abi_version`, ...), when one is. */
  readonly symbol?: string | undefined;
  /** The describe() JSON field at fault (`boundaries[1].dtype`), when one is. */
  readonly field?: string | undefined;
  readonly detail: string;
}

export class EngineLoadError extends Error {
  override readonly name = 'EngineLoadError';
  readonly library: string;
  readonly failure: EngineLoadFailure;
  readonly symbol: string | undefined;
  readonly field: string | undefined;
  readonly detail: string;

  constructor(fields: EngineLoadErrorFields) {
    super(`${fields.library}: ${fields.detail}`);
    this.library = fields.library;
    this.failure = fields.failure;
    this.symbol = fields.symbol;
    this.field = fields.field;
    this.detail = fields.detail;
  }

  toFields(): EngineLoadErrorFields {
    return { library: this.library, failure: this.failure, symbol: this.symbol, field: this.field, detail: this.detail };
  }
}

/** An engine call (other than a pass) returned a ti_status other than TI_OK. */
export class EngineCallError extends Error {
  override readonly name = 'EngineCallError';
  readonly status = 'engine_error' as const;
  /** The ti_* call that failed (`ti_set_input`). */
  readonly call: string;
  /** ti_status_string() of the status (`TI_ERR_UNKNOWN_NAME`). */
  readonly code: string;
  /** The engine's own message (ti_last_error(), or ti_open's err buffer). */
  readonly engineMessage: string;

  constructor(call: string, code: string, engineMessage: string) {
    super(`${call} failed with ${code}: ${engineMessage === '' ? '(the engine gave no message)' : engineMessage}`);
    this.call = call;
    this.code = code;
    this.engineMessage = engineMessage;
  }
}

/** The host was misused or broke (a call after close, a malformed message, ...). */
export class EngineHostError extends Error {
  override readonly name = 'EngineHostError';
}

/**
 * The host is gone: its engine crashed, hung past the watchdog, or the host was closed.
 * Every later call rejects with this error, naming why.
 */
export class EngineHostDeadError extends Error {
  override readonly name = 'EngineHostDeadError';
}
