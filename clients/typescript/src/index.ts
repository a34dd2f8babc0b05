// omoide's HTTP API for TypeScript: the Python `omoide.Client`'s methods (camelCase), typed
// from the server's /openapi.json (src/schema.ts, generated), over fetch, with no runtime
// dependency. Errors are the classes of ./errors.ts; 429 and 503 are retried with backoff.
//
//   const memory = new Client({ baseUrl: "http://127.0.0.1:8000", apiKey: "secret" });
//   await memory.add("I like jasmine tea", { user_id: "alice" });
//   (await memory.search("what does alice drink?", { user_id: "alice" })).hits[0].memory.text;

import { BackendError, errorFrom, InvalidInput } from "./errors.js";
import type { components, paths } from "./schema.js";

export * from "./errors.js";
export type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Reply<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: infer R;
}
  ? R extends { 200: { content: { "application/json": infer J } } }
    ? J
    : R extends { 201: { content: { "application/json": infer J } } }
      ? J
      : never
  : never;
type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

export type MemoryItem = Schemas["MemoryItem"];
export type SearchResult = Schemas["SearchResult"];
export type SearchFilters = Schemas["SearchFilters"];
export type Page = Schemas["Page"];
export type HistoryEntry = Schemas["HistoryEntry"];
export type ContextResult = Schemas["ContextResult"];
export type Session = Schemas["Session"];
export type Episode = Schemas["Episode"];
export type Job = Schemas["Job"];
export type Message = Schemas["Message-Input"];
/** A tenant: `user_id` and `scope_id`; omitted means "default" (or the API key's tenant). */
export interface Tenant {
  user_id?: string | null;
  scope_id?: string | null;
}
export type AddOptions = Omit<Schemas["AddMemories"], "text" | "messages">;
export type SearchOptions = Omit<Schemas["SearchMemories"], "query">;
export type GetAllOptions = Omit<Query<"/v1/memories", "get">, "filters"> & {
  filters?: SearchFilters;
};
export type UpdateOptions = Omit<Schemas["UpdateMemory"], "text" | "metadata">;
export type ContextOptions = Omit<Schemas["ContextRequest"], "query">;
export type SessionOptions = Omit<Schemas["CreateSession"], "session_id">;
export type UpdateSessionOptions = Schemas["UpdateSession"];
export type ListOptions = Tenant & { limit?: number; offset?: number };
export type ListJobsOptions = Query<"/v1/jobs", "get">;
export type JobState = NonNullable<ListJobsOptions["state"]>;
export type Health = Record<string, unknown> & { status?: string };

export interface ClientOptions {
  /** The server; default http://127.0.0.1:8000. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Per request, in milliseconds; default 60 000. */
  timeoutMs?: number;
  /** How many times a 429 or 503 is retried; default 3. */
  retries?: number;
  /** The first retry's wait in milliseconds, doubled each time (or the server's Retry-After). */
  backoffMs?: number;
  /** A fetch implementation; default globalThis.fetch. */
  fetch?: typeof fetch;
  /** How to wait between retries; default setTimeout (tests pass a recorder). */
  sleep?: (ms: number) => Promise<void>;
}

interface Call {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: object;
  body?: object;
  /** Error statuses whose body is still the answer (/health's 503). */
  accept?: number[];
}

const RETRIED = new Set([429, 503]);

function segment(value: string | number): string {
  return encodeURIComponent(String(value));
}

function withoutEmpty(value: object | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined && v !== null));
}

function tenantOf(options: Tenant | undefined): Tenant {
  return { user_id: options?.user_id, scope_id: options?.scope_id };
}

export class Client {
  readonly baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #backoffMs: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
    this.#headers = { accept: "application/json" };
    if (options.apiKey) this.#headers.authorization = `Bearer ${options.apiKey}`;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#retries = options.retries ?? 3;
    this.#backoffMs = options.backoffMs ?? 250;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  // plumbing ----------------------------------------------------------------------------
  #url(call: Call): string {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(withoutEmpty(call.query))) query.set(key, String(value));
    const text = query.toString();
    return `${this.baseUrl}${call.path}${text ? `?${text}` : ""}`;
  }

  async #once(call: Call): Promise<Response> {
    const headers = { ...this.#headers };
    let body: string | undefined;
    if (call.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(withoutEmpty(call.body));
    }
    try {
      return await this.#fetch(this.#url(call), {
        method: call.method,
        headers,
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new BackendError(`cannot reach omoide at ${this.baseUrl}: ${reason}`, { retryable: true });
    }
  }

  #wait(response: Response, attempt: number): Promise<void> {
    const header = Number(response.headers.get("retry-after"));
    const ms = Number.isFinite(header) && header > 0 ? header * 1000 : this.#backoffMs * 2 ** attempt;
    return this.#sleep(ms);
  }

  /** One call: retried on 429/503, its JSON reply, or the omoide error it stands for. */
  async #send<T>(call: Call): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const response = await this.#once(call);
      const accepted = call.accept?.includes(response.status) ?? false;
      if (response.ok || accepted) {
        return (response.status === 204 ? undefined : await response.json()) as T;
      }
      if (!RETRIED.has(response.status) || attempt >= this.#retries) throw await errorFrom(response);
      await response.body?.cancel();
      await this.#wait(response, attempt);
    }
  }

  // memories ----------------------------------------------------------------------------
  /** Store each message as a memory (a string is one user message). */
  async add(messages: string | Message[], options: AddOptions = {}): Promise<MemoryItem[]> {
    if (typeof messages !== "string" && !Array.isArray(messages)) {
      throw new InvalidInput("messages must be a string or a list of messages");
    }
    const body = { ...options, [typeof messages === "string" ? "text" : "messages"]: messages };
    const reply = await this.#send<Reply<"/v1/memories", "post">>({ method: "POST", path: "/v1/memories", body });
    return reply.items;
  }

  /** The memories most relevant to `query`, best first. */
  search(query: string, options: SearchOptions = {}): Promise<SearchResult> {
    return this.#send({ method: "POST", path: "/v1/memories/search", body: { ...options, query } });
  }

  /** One memory by id (NotFound if it is not the tenant's). */
  get(memoryId: string, tenant?: Tenant): Promise<MemoryItem> {
    return this.#send({ method: "GET", path: `/v1/memories/${segment(memoryId)}`, query: tenantOf(tenant) });
  }

  /** A page of the tenant's memories, newest first, with the total count. */
  getAll(options: GetAllOptions = {}): Promise<Page> {
    const { filters, ...rest } = options;
    const query = { ...rest, filters: filters === undefined ? undefined : JSON.stringify(filters) };
    return this.#send({ method: "GET", path: "/v1/memories", query });
  }

  /** Change a memory's text and/or metadata; the change is recorded in its history. */
  update(
    memoryId: string,
    text?: string | null,
    metadata?: Record<string, unknown> | null,
    tenant?: UpdateOptions,
  ): Promise<MemoryItem> {
    const body = { text, metadata, ...tenantOf(tenant) };
    return this.#send({ method: "PATCH", path: `/v1/memories/${segment(memoryId)}`, body });
  }

  /** Delete one memory. */
  async delete(memoryId: string, tenant?: Tenant): Promise<void> {
    await this.#send({ method: "DELETE", path: `/v1/memories/${segment(memoryId)}`, query: tenantOf(tenant) });
  }

  /** Delete everything of one tenant; both ids are always sent (never implied). */
  async deleteAll(tenant: { user_id?: string; scope_id?: string } = {}): Promise<number> {
    const query = { user_id: tenant.user_id ?? "default", scope_id: tenant.scope_id ?? "default" };
    const reply = await this.#send<{ deleted: number }>({ method: "DELETE", path: "/v1/memories", query });
    return reply.deleted;
  }

  /** A memory's changes, oldest first. */
  history(memoryId: string, tenant?: Tenant): Promise<HistoryEntry[]> {
    const path = `/v1/memories/${segment(memoryId)}/history`;
    return this.#send({ method: "GET", path, query: tenantOf(tenant) });
  }

  /** A ready-to-paste block of what is known for `query`, within `token_budget` tokens. */
  context(query: string, options: ContextOptions = {}): Promise<ContextResult> {
    return this.#send({ method: "POST", path: "/v1/context", body: { ...options, query } });
  }

  // sessions and episodes -----------------------------------------------------------------
  /** Create a session (Conflict if the id is taken). */
  createSession(sessionId: string, options: SessionOptions = {}): Promise<Session> {
    return this.#send({ method: "POST", path: "/v1/sessions", body: { ...options, session_id: sessionId } });
  }

  /** One session by its external id. */
  getSession(sessionId: string, tenant?: Tenant): Promise<Session> {
    return this.#send({ method: "GET", path: `/v1/sessions/${segment(sessionId)}`, query: tenantOf(tenant) });
  }

  /** A page of the tenant's sessions and their total count. */
  listSessions(options: ListOptions = {}): Promise<{ items: Session[]; total: number }> {
    return this.#send({ method: "GET", path: "/v1/sessions", query: options });
  }

  /** Rename a session or change its project or metadata. */
  updateSession(sessionId: string, options: UpdateSessionOptions = {}): Promise<Session> {
    return this.#send({ method: "PATCH", path: `/v1/sessions/${segment(sessionId)}`, body: options });
  }

  /** Delete a session with its episodes and memories; the count deleted. */
  async deleteSession(sessionId: string, tenant?: Tenant): Promise<number> {
    const path = `/v1/sessions/${segment(sessionId)}`;
    const reply = await this.#send<{ deleted: number }>({ method: "DELETE", path, query: tenantOf(tenant) });
    return reply.deleted;
  }

  /** A page of a session's episodes and their total count. */
  listEpisodes(sessionId: string, options: ListOptions = {}): Promise<{ items: Episode[]; total: number }> {
    return this.#send({ method: "GET", path: `/v1/sessions/${segment(sessionId)}/episodes`, query: options });
  }

  // jobs and health ---------------------------------------------------------------------
  /** Background jobs, newest first. */
  async listJobs(options: ListJobsOptions = {}): Promise<Job[]> {
    const reply = await this.#send<Reply<"/v1/jobs", "get">>({ method: "GET", path: "/v1/jobs", query: options });
    return reply.items;
  }

  /** How many jobs are in each state. */
  jobCounts(tenant?: Tenant): Promise<Record<string, number>> {
    return this.#send({ method: "GET", path: "/v1/jobs/stats", query: tenantOf(tenant) });
  }

  /** Run a failed job again. */
  retryJob(jobId: number, tenant?: Tenant): Promise<Job> {
    return this.#send({ method: "POST", path: `/v1/jobs/${segment(jobId)}/retry`, query: tenantOf(tenant) });
  }

  /** The server's /health report; a server whose store is down answers 503 with it. */
  health(options: { probe_embedder?: boolean } = {}): Promise<Health> {
    const query = { probe: options.probe_embedder ?? false };
    return this.#send({ method: "GET", path: "/health", query, accept: [503] });
  }
}
