// omoide's errors, from its `{"error": {"code", "message"}}` body: one class per code, as in
// the Python client (omoide.errors). Unknown codes fall back to the HTTP status.

export interface ErrorFields {
  status?: number;
  code?: string;
  requestId?: string | null;
  retryable?: boolean;
}

/** Every error this client throws. `status` is the HTTP status (absent when unreachable). */
export class OmoideError extends Error {
  readonly status: number | undefined;
  readonly code: string;
  readonly requestId: string | null;
  readonly retryable: boolean;

  constructor(message: string, fields: ErrorFields = {}) {
    super(message);
    this.name = new.target.name;
    this.status = fields.status;
    this.code = fields.code ?? "omoide_error";
    this.requestId = fields.requestId ?? null;
    this.retryable = fields.retryable ?? false;
  }
}

/** 400, 413, 415, 422: the request is wrong; `message` says what. */
export class InvalidInput extends OmoideError {}
/** 401: no API key, or a wrong one. */
export class Unauthorized extends OmoideError {}
/** 403: the key may not reach this tenant. */
export class Forbidden extends OmoideError {}
/** 404: no such memory, session or job (in this tenant). */
export class NotFound extends OmoideError {}
/** 409: the id is taken. */
export class Conflict extends OmoideError {}
/** The feature needs an LLM the server does not have. */
export class FeatureDisabled extends OmoideError {}
/** 5xx, a rate limit, or the server cannot be reached; `retryable` says whether to try again. */
export class BackendError extends OmoideError {}
export class StoreError extends BackendError {}
export class EmbedderError extends BackendError {}
export class LLMError extends BackendError {}
export class MigrationError extends OmoideError {}

const BY_CODE: Record<string, typeof OmoideError> = {
  invalid_input: InvalidInput,
  unauthorized: Unauthorized,
  forbidden: Forbidden,
  not_found: NotFound,
  conflict: Conflict,
  feature_disabled: FeatureDisabled,
  backend_error: BackendError,
  store_error: StoreError,
  embedder_error: EmbedderError,
  llm_error: LLMError,
  migration_error: MigrationError,
};

const BY_STATUS: Record<number, typeof OmoideError> = {
  400: InvalidInput,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
};

/** The error an HTTP error response stands for: by its error code, else by its status. */
export async function errorFrom(response: Response): Promise<OmoideError> {
  let body: unknown = undefined;
  try {
    body = await response.json();
  } catch {
    // not JSON: the status decides
  }
  const fields = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const info = typeof fields.error === "object" && fields.error !== null ? (fields.error as Record<string, unknown>) : {};
  const code = typeof info.code === "string" ? info.code : undefined;
  const message =
    (typeof info.message === "string" && info.message) ||
    (typeof fields.detail === "string" && fields.detail) ||
    response.statusText ||
    `HTTP ${response.status}`;
  const status = response.status;
  const cls =
    (code !== undefined ? BY_CODE[code] : undefined) ??
    (status >= 500 || status === 429 ? BackendError : (BY_STATUS[status] ?? InvalidInput));
  const requestId = typeof fields.request_id === "string" ? fields.request_id : null;
  const retryable = [429, 502, 503, 504].includes(status);
  return new cls(message, { status, code: code ?? cls.name, requestId, retryable });
}
