/**
 * The same sequence of protocol calls on the SDK's own `InMemorySessionStore` and on
 * `SessionDbStore` over a fresh `sessiondb serve`: every answer must be equal (mtimes, which
 * are each store's own clock, are checked for the protocol's rules instead).
 *
 * One deliberate difference in the input: the protocol asks stores to treat `uuid` as an
 * idempotency key, which the in-memory store does not do. So where the sequence replays a
 * batch (what the SDK's mirror retry and a re-import do), the replay goes to our store only;
 * the answers must still be equal.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  InMemorySessionStore,
  type SessionStore as SdkSessionStore,
} from "@anthropic-ai/claude-agent-sdk";
import { SessionDbStore, type SessionKey, type SessionStoreEntry } from "../src/index.js";
import { startServer, type Running } from "./support.js";

let server: Running;

before(async () => {
  server = await startServer();
});

after(async () => {
  assert.equal(await server.stop(), 0, "sessiondb serve stops cleanly");
});

const P = "-home-me-app";
const OTHER = "-home-me-other";
const A = "0b0b6e36-2a4c-4f59-9f5b-3d0f1b0e9a11";
const B = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f";

function user(uuid: string, text: string, extra: Record<string, unknown> = {}): SessionStoreEntry {
  return {
    type: "user",
    uuid,
    parentUuid: null,
    sessionId: A,
    timestamp: "2026-12-01T10:00:00.000Z",
    cwd: "/home/me/app",
    gitBranch: "main",
    message: { role: "user", content: text },
    ...extra,
  };
}

function assistant(uuid: string, parent: string, text: string): SessionStoreEntry {
  return {
    type: "assistant",
    uuid,
    parentUuid: parent,
    sessionId: A,
    timestamp: "2026-12-01T10:00:01.500Z",
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      usage: { input_tokens: 12, output_tokens: 3.5e1, ratio: 0.25 },
    },
  };
}

/** What one store answers to the sequence, step by step. */
type Transcript = Array<[string, unknown]>;

/** Runs the sequence; `replay(key, batch)` sends a batch the sequence retries. */
async function sequence(
  store: SdkSessionStore,
  replay: (key: SessionKey, entries: SessionStoreEntry[]) => Promise<void>,
): Promise<{ answers: Transcript; mtimes: Record<string, number> }> {
  const answers: Transcript = [];
  const mtimes: Record<string, number> = {};
  const main: SessionKey = { projectKey: P, sessionId: A };
  const agent1: SessionKey = { ...main, subpath: "subagents/agent-a1" };
  const agent2: SessionKey = { ...main, subpath: "subagents/workflows/r1/agent-a2" };
  // A copy: the in-memory store hands out its live arrays.
  const record = async (step: string, value: Promise<unknown>) =>
    answers.push([step, structuredClone(await value)]);

  await record("load never written", store.load(main));
  await record("list sessions of an unknown project", store.listSessions!(P));
  await record("summaries of an unknown project", store.listSessionSummaries!(P));

  const first = [
    { type: "permission-mode", permissionMode: "default", sessionId: A },
    user("u1", "Fix the parser, please\nit drops lines"),
    assistant("a1", "u1", "Looking — “quotes”, emoji 🎉, a\u2028separator"),
  ];
  await store.append(main, first);
  await record("load after one batch", store.load(main));
  await replay(main, first.slice(1)); // its uuid records: a uuid-less entry is never deduplicated
  await record("load after the batch was replayed", store.load(main));

  const second = [
    user("u2", "and add a test", { nested: { list: [1, 2.5, { deep: null }], flag: false } }),
    { type: "custom-title", customTitle: "Parser fix", sessionId: A },
    { type: "ai-title", aiTitle: "Fixing the parser", sessionId: A },
    { type: "tag", tag: "bug", sessionId: A },
  ];
  await store.append(main, second);
  // A retried batch whose first half was stored: only the new uuid records are added.
  const third = [assistant("a2", "u2", "Done."), { type: "last-prompt", lastPrompt: "and add a test", sessionId: A }];
  await replay(main, [second[0]!, third[0]!]);
  await store.append(main, third);
  await record("load keeps append order", store.load(main));
  await store.append(main, []);
  await record("an empty batch changes nothing", store.load(main));

  await store.append(agent1, [{ type: "user", uuid: "s1", isSidechain: true, message: { role: "user", content: "sub task" } }]);
  await store.append(agent2, [{ type: "user", uuid: "s2", isSidechain: true, message: { role: "user", content: "nested" } }]);
  await store.append(agent1, [{ type: "agent_metadata", agentType: "general-purpose", toolUseId: "toolu_1" }]);
  await record("sub-stream load", store.load(agent1));
  await record("main stream unchanged by sub-streams", store.load(main));
  await record("unknown subpath of a written session", store.load({ ...main, subpath: "subagents/agent-none" }));
  await record("subkeys", store.listSubkeys!({ projectKey: P, sessionId: A }));
  await record("subkeys of a session never written", store.listSubkeys!({ projectKey: P, sessionId: B }));

  await store.append({ projectKey: P, sessionId: B }, [
    { type: "user", uuid: "b1", sessionId: B, timestamp: "2026-12-02T09:00:00Z", message: { role: "user", content: "<command-name>/init</command-name>" } },
    { type: "user", uuid: "b2", sessionId: B, isMeta: true, message: { role: "user", content: "meta text" } },
  ]);
  await store.append({ projectKey: OTHER, sessionId: A }, [{ type: "user", uuid: "o1", message: { role: "user", content: "elsewhere" } }]);
  await record("another project's stream of the same id", store.load({ projectKey: OTHER, sessionId: A }));

  const listed = await store.listSessions!(P);
  for (const s of listed) mtimes[`list ${s.sessionId}`] = s.mtime;
  answers.push(["list sessions", listed.map((s) => s.sessionId)]);
  const summaries = await store.listSessionSummaries!(P);
  for (const s of summaries) mtimes[`summary ${s.sessionId}`] = s.mtime;
  answers.push(["summaries", summaries.map((s) => ({ sessionId: s.sessionId, data: s.data }))]);

  await store.delete!(agent1);
  await record("subkeys after deleting one", store.listSubkeys!({ projectKey: P, sessionId: A }));
  await record("deleted sub-stream", store.load(agent1));
  await record("main stream after deleting a sub-stream", store.load(main));
  await store.delete!({ projectKey: P, sessionId: "never-written" });
  await store.delete!(main);
  await record("load after delete", store.load(main));
  await record("sub-stream after deleting its session", store.load(agent2));
  await record("subkeys after delete", store.listSubkeys!({ projectKey: P, sessionId: A }));
  await record("sessions after delete", store.listSessions!(P).then((l) => l.map((s) => s.sessionId)));
  await record(
    "summaries after delete",
    store.listSessionSummaries!(P).then((l) => l.map((s) => s.sessionId)),
  );
  await record("the other project keeps its stream", store.load({ projectKey: OTHER, sessionId: A }));
  return { answers, mtimes };
}

test("SessionDbStore answers as the SDK's InMemorySessionStore", async () => {
  const reference = await sequence(new InMemorySessionStore(), async () => {});
  const ours = new SessionDbStore({ baseUrl: server.url });
  const sdkTyped: SdkSessionStore = ours; // the SDK's own type accepts it
  const got = await sequence(sdkTyped, (key, entries) => ours.append(key, entries));
  assert.equal(got.answers.length, reference.answers.length);
  for (let i = 0; i < reference.answers.length; i++) {
    assert.deepStrictEqual(got.answers[i], reference.answers[i], `step ${reference.answers[i]![0]}`);
  }
  // The summaries folded something real (the comparison above is not between two empties).
  const summaries = got.answers.find(([step]) => step === "summaries")![1] as Array<{ data: Record<string, unknown> }>;
  assert.equal(summaries[0]!.data.customTitle, "Parser fix");
  assert.equal(summaries[0]!.data.firstPrompt, "Fix the parser, please it drops lines");
  assert.equal(summaries[1]!.data.commandFallback, "/init");
  // mtimes: epoch ms, and each sidecar at least as new as its listed stream.
  for (const id of [A, B]) {
    assert.ok(got.mtimes[`list ${id}`]! > 1e12, "list mtime is epoch ms");
    assert.ok(got.mtimes[`summary ${id}`]! >= got.mtimes[`list ${id}`]!, "sidecar not stale");
  }
});

test("summaries are stored with the Python SDK's key names", async () => {
  const store = new SessionDbStore({ baseUrl: server.url });
  const key = { projectKey: "-interop", sessionId: A };
  await store.append(key, [user("i1", "shared prompt"), { type: "ai-title", aiTitle: "Shared" }]);
  const raw = await fetch(`${server.url}/v1/store/list_session_summaries`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ project_key: "-interop" }),
  }).then((r) => r.json() as Promise<{ summaries: Array<{ data: Record<string, unknown> }> }>);
  const data = raw.summaries[0]!.data;
  assert.equal(data.first_prompt, "shared prompt");
  assert.equal(data.ai_title, "Shared");
  assert.equal(data.is_sidechain, false);
  assert.equal(data.firstPrompt, undefined);
  const [mine] = await store.listSessionSummaries("-interop");
  assert.equal(mine!.data.firstPrompt, "shared prompt");
  await store.delete(key);
});

test("a bad subpath is the server's 400, with its message", async () => {
  const store = new SessionDbStore({ baseUrl: server.url });
  await assert.rejects(
    store.load({ projectKey: P, sessionId: A, subpath: "subagents/../x" }),
    (e: Error & { status?: number }) => e.status === 400 && /\.\./.test(e.message),
  );
  await assert.rejects(
    store.append({ projectKey: P, sessionId: A }, [{ notype: 1 } as unknown as SessionStoreEntry]),
    (e: Error & { status?: number }) => e.status === 400 && /entries\[0\] has no string "type"/.test(e.message),
  );
});
