/**
 * A `SessionStore` for `@anthropic-ai/claude-agent-sdk` backed by a `sessiondb serve` server.
 *
 *     import { query } from "@anthropic-ai/claude-agent-sdk";
 *     import { SessionDbStore } from "sessiondb";
 *
 *     const store = new SessionDbStore({ baseUrl: "http://127.0.0.1:7878", token });
 *     for await (const m of query({ prompt, options: { sessionStore: store } })) { ... }
 *
 * All six protocol methods are implemented against the server's `/v1/store/` endpoints:
 * `append`, `load`, `listSessions`, `listSessionSummaries`, `delete`, `listSubkeys`. The server
 * stores entries as transcript rows (a mirrored session lists, searches and resumes in
 * sessiondb like an imported one), ignores an entry whose uuid the stream already holds, and
 * stamps mtimes itself (epoch ms, strictly increasing per stream).
 *
 * Summaries: after appending to a main stream, `append` folds the lines the sidecar has not
 * seen (the append's answer carries them) with the SDK's own `foldSessionSummary` and puts
 * the result back; the server takes the put only if nobody folded in between (otherwise this
 * asks again and re-folds), so each stored line is folded once, in commit order, whoever
 * wrote it. The sidecar is stored with the Python SDK's key names (`is_sidechain`, ...), so
 * Python and TypeScript apps sharing one server read each other's summaries.
 *
 * No runtime dependency besides Node's `fetch`; the SDK is loaded (for the fold) only when a
 * main stream is appended to, from the app's own installation.
 */

/** The SDK's `SessionKey`: a main transcript (no `subpath`) or a sub-agent's. */
export type SessionKey = {
  projectKey: string;
  sessionId: string;
  subpath?: string;
};

/** One transcript line: a JSON object with a string `type`; the rest is passed through. */
export type SessionStoreEntry = {
  type: string;
  uuid?: string;
  timestamp?: string;
  [k: string]: unknown;
};

/** The SDK's `SessionSummaryEntry`: `data` is the SDK's own fold, stored verbatim. */
export type SessionSummaryEntry = {
  sessionId: string;
  mtime: number;
  data: Record<string, unknown>;
};

/** The SDK's `foldSessionSummary`. */
export type FoldSessionSummary = (
  prev: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: SessionStoreEntry[],
  options?: { mtime?: number },
) => SessionSummaryEntry;

export interface SessionDbStoreOptions {
  /** The address `sessiondb serve` printed (`http://127.0.0.1:7878`); a path prefix is kept. */
  baseUrl: string;
  /** The server's token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * How long one method call may take, retries included, in ms (default 50,000: under the
   * SDK's 60 s mirror timeout, so a slow server fails the batch here and the SDK's own
   * retry or `mirror_error` takes over).
   */
  timeoutMs?: number;
  /** Further attempts after a failure that is safe to repeat (default 2). */
  retries?: number;
  /** The fold to use (default: the SDK's `foldSessionSummary`, imported on first use). */
  foldSessionSummary?: FoldSessionSummary;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/** The server answered with an error (`status` is the HTTP status; 0: no answer). */
export class SessionDbError extends Error {
  readonly status: number;
  readonly detail: string;

  constructor(status: number, detail: string, options?: { cause?: unknown }) {
    super(`sessiondb server: ${status}: ${detail}`, options);
    this.name = "SessionDbError";
    this.status = status;
    this.detail = detail;
  }
}

/** The server's key: `{project_key, session_id, subpath?}`. */
type WireKey = { project_key: string; session_id: string; subpath?: string };

type WireSummary = { session_id: string; mtime: number; data: Record<string, unknown> };

type Watermark = { transcript: number; ordinal: number };

/** What `summary/pending` answers: the fold this client owes a main session. */
type Pending = {
  summary: WireSummary | null;
  watermark: Watermark | null;
  through: Watermark;
  mtime: number;
  entries: SessionStoreEntry[];
} | null;

/**
 * The sidecar's keys as the TypeScript SDK names them and as they are stored (the Python
 * SDK's names). Keys not listed pass through unchanged both ways.
 */
const SUMMARY_KEYS: ReadonlyArray<readonly [string, string]> = [
  ["isSidechain", "is_sidechain"],
  ["createdAt", "created_at"],
  ["cwd", "cwd"],
  ["firstPrompt", "first_prompt"],
  ["firstPromptLocked", "first_prompt_locked"],
  ["commandFallback", "command_fallback"],
  ["customTitle", "custom_title"],
  ["aiTitle", "ai_title"],
  ["lastPrompt", "last_prompt"],
  ["summaryHint", "summary_hint"],
  ["gitBranch", "git_branch"],
  ["tag", "tag"],
];
const TO_STORED = new Map(SUMMARY_KEYS.map(([ts, py]) => [ts, py]));
const FROM_STORED = new Map(SUMMARY_KEYS.map(([ts, py]) => [py, ts]));

function renameKeys(data: Record<string, unknown>, names: Map<string, string>) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) out[names.get(k) ?? k] = v;
  return out;
}

function wireKey(key: SessionKey): WireKey {
  const out: WireKey = { project_key: key.projectKey, session_id: key.sessionId };
  if (key.subpath !== undefined) out.subpath = key.subpath;
  return out;
}

function fromWireSummary(s: WireSummary): SessionSummaryEntry {
  return { sessionId: s.session_id, mtime: s.mtime, data: renameKeys(s.data, FROM_STORED) };
}

/** Statuses that say the request was not handled: always safe to send again. */
const NOT_HANDLED = new Set([429, 502, 503, 504]);

/** How many summary folds `append` tries when other writers keep folding first. */
const FOLD_ATTEMPTS = 100;

let sdkFold: Promise<FoldSessionSummary> | undefined;

/** The SDK's fold, from the app's own installation of the SDK. */
function loadSdkFold(): Promise<FoldSessionSummary> {
  sdkFold ??= import("@anthropic-ai/claude-agent-sdk" as string).then(
    (sdk: { foldSessionSummary?: FoldSessionSummary }) => {
      if (typeof sdk.foldSessionSummary !== "function") {
        throw new Error("@anthropic-ai/claude-agent-sdk has no foldSessionSummary");
      }
      return sdk.foldSessionSummary;
    },
    (e: unknown) => {
      sdkFold = undefined;
      throw new Error(
        "sessiondb: folding summaries needs @anthropic-ai/claude-agent-sdk installed " +
          "(or pass foldSessionSummary)",
        { cause: e },
      );
    },
  );
  return sdkFold;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True for a fetch failure that happened before the request could reach the server. */
function neverSent(e: unknown): boolean {
  const code = (e as { cause?: { code?: string } })?.cause?.code;
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN";
}

/** `SessionStore` over HTTP to `sessiondb serve`. */
export class SessionDbStore {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #fold: FoldSessionSummary | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: SessionDbStoreOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`only http:// and https:// URLs are supported, not ${options.baseUrl}`);
    }
    this.#base = url.origin + url.pathname.replace(/\/+$/, "");
    this.#headers = { "content-type": "application/json" };
    if (options.token) this.#headers.authorization = `Bearer ${options.token}`;
    this.#timeoutMs = options.timeoutMs ?? 50_000;
    this.#retries = options.retries ?? 2;
    this.#fold = options.foldSessionSummary;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  // --- transport -----------------------------------------------------------------------

  /**
   * POSTs `body` to `path` and returns the JSON answer. `replaySafe`: sending the request
   * twice does no harm, so a timeout, a lost connection or a 5xx may be retried; requests
   * the server did not handle (refused connection, 429/502/503/504) are retried always.
   */
  async #post<T>(path: string, body: unknown, replaySafe: boolean): Promise<T> {
    const payload = JSON.stringify(body);
    const deadline = Date.now() + this.#timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const left = deadline - Date.now();
      let retry: boolean;
      let failure: SessionDbError;
      try {
        const response = await this.#fetch(this.#base + path, {
          method: "POST",
          headers: this.#headers,
          body: payload,
          signal: AbortSignal.timeout(Math.max(left, 1)),
        });
        const text = await response.text();
        let answer: unknown;
        try {
          answer = text ? JSON.parse(text) : null;
        } catch {
          answer = undefined;
        }
        if (response.ok && answer !== undefined) return answer as T;
        const message =
          answer && typeof answer === "object" && typeof (answer as { error?: unknown }).error === "string"
            ? (answer as { error: string }).error
            : text;
        failure = new SessionDbError(response.status, message);
        retry = NOT_HANDLED.has(response.status) || (replaySafe && response.status >= 500);
      } catch (e) {
        const timedOut = (e as { name?: string })?.name === "TimeoutError";
        const detail = timedOut
          ? `no answer within ${this.#timeoutMs} ms`
          : `${(e as Error)?.message ?? e}${neverSent(e) ? ` (${(e as { cause: { code: string } }).cause.code})` : ""}`;
        failure = new SessionDbError(0, `${path}: ${detail}`, { cause: e });
        retry = neverSent(e) || (replaySafe && !timedOut);
        if (timedOut) throw failure;
      }
      const backoff = 100 * 2 ** attempt;
      if (!retry || attempt >= this.#retries || Date.now() + backoff >= deadline) throw failure;
      await sleep(backoff);
    }
  }

  // --- protocol ------------------------------------------------------------------------

  /**
   * Stores a batch. Entries whose uuid the stream holds are skipped (so a retried batch is
   * harmless); an empty batch does nothing (no stream, no mtime, no summary).
   */
  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const main = key.subpath === undefined;
    // A batch of uuid entries only is idempotent on the server: safe to send again.
    const replaySafe = entries.every((e) => typeof e.uuid === "string" && e.uuid !== "");
    const answer = await this.#post<{ pending?: Pending }>(
      "/v1/store/append",
      { key: wireKey(key), entries, fold: main },
      replaySafe,
    );
    if (main) await this.#foldSummary(key, "pending" in answer ? answer.pending! : undefined);
  }

  /** Folds what the sidecar has not seen (`pending`: the append's answer; `undefined`:
   * ask) and puts it back; on a conflict asks again. */
  async #foldSummary(key: SessionKey, pending: Pending | undefined): Promise<void> {
    const fold = this.#fold ?? (await loadSdkFold());
    const session = { project_key: key.projectKey, session_id: key.sessionId };
    const sdkKey = { projectKey: key.projectKey, sessionId: key.sessionId };
    for (let attempt = 0; attempt < FOLD_ATTEMPTS; attempt++) {
      if (attempt > 0 || pending === undefined) {
        pending = (
          await this.#post<{ pending: Pending }>("/v1/store/summary/pending", { key: session }, true)
        ).pending;
      }
      if (pending === null) return; // deleted meanwhile
      const prev = pending.summary ? fromWireSummary(pending.summary) : undefined;
      if (prev && pending.entries.length === 0 && prev.mtime >= pending.mtime) return;
      const folded = fold(prev, sdkKey, pending.entries, { mtime: pending.mtime });
      try {
        await this.#post(
          "/v1/store/summary/put",
          {
            key: session,
            expect: pending.watermark,
            through: pending.through,
            mtime: pending.mtime,
            data: renameKeys(folded.data, TO_STORED),
          },
          true,
        );
        return;
      } catch (e) {
        if (!(e instanceof SessionDbError) || e.status !== 409) throw e;
      }
    }
    throw new SessionDbError(409, "gave up folding the summary: too many concurrent writers");
  }

  /** Every entry of a stream in append order; `null` for a stream never written. */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const answer = await this.#post<{ entries: SessionStoreEntry[] | null }>(
      "/v1/store/load",
      { key: wireKey(key) },
      true,
    );
    return answer.entries;
  }

  /** The project's sessions that have a main stream, with their mtime (epoch ms). */
  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    const answer = await this.#post<{ sessions: Array<{ session_id: string; mtime: number }> }>(
      "/v1/store/list_sessions",
      { project_key: projectKey },
      true,
    );
    return answer.sessions.map((s) => ({ sessionId: s.session_id, mtime: s.mtime }));
  }

  /** The project's summary sidecars, `data` as the SDK folded it. */
  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const answer = await this.#post<{ summaries: WireSummary[] }>(
      "/v1/store/list_session_summaries",
      { project_key: projectKey },
      true,
    );
    return answer.summaries.map(fromWireSummary);
  }

  /** A main key removes the session with every sub-stream and its summary; a subpath only
   * that stream. A key never written is no error. */
  async delete(key: SessionKey): Promise<void> {
    await this.#post("/v1/store/delete", { key: wireKey(key) }, true);
  }

  /** The session's sub-stream subpaths (never the main one), in first-write order. */
  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    const answer = await this.#post<{ subkeys: string[] }>(
      "/v1/store/list_subkeys",
      { key: { project_key: key.projectKey, session_id: key.sessionId } },
      true,
    );
    return answer.subkeys;
  }
}

/** The same class under the name the SDK's option takes (`sessionStore`). */
export { SessionDbStore as SessionStore };
