/**
 * The real Agent SDK (`query()`, which runs the Claude Code CLI it bundles) against the
 * offline fake Messages API of `../shared/oracle/tool`, with `sessionStore` set to a
 * `SessionDbStore`: the conversation is mirrored into sessiondb, then resumed from the store
 * alone (a fresh, empty local config dir), and the resumed request must hold the first
 * conversation.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { listSessions, query, type SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { SessionDbStore } from "../src/index.js";
import { oracleTool, startFakeApi, startServer, tempDir, type Running } from "./support.js";

const tool = oracleTool();
let server: Running;
let fake: Running;
let dir: string;
let logdir: string;

const FIRST_PROMPT = "Name a colour for the parser ticket";
const FIRST_REPLY = "Ultramarine, for the parser ticket.";
const SECOND_PROMPT = "And a second colour?";
const SECOND_REPLY = "Vermilion.";

before(async () => {
  if (!tool) return;
  dir = tempDir("query");
  logdir = join(dir, "api-log");
  const turns = join(dir, "turns.json");
  writeFileSync(
    turns,
    JSON.stringify([
      { content: [{ type: "text", text: FIRST_REPLY }] },
      { content: [{ type: "text", text: SECOND_REPLY }] },
    ]),
  );
  server = await startServer();
  fake = await startFakeApi(tool, turns, logdir);
});

after(async () => {
  if (!tool) return;
  assert.equal(await server.stop(), 0);
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs one `query()` offline with its own HOME and config dir; returns its messages. */
async function run(prompt: string, configDir: string, store: SessionDbStore, resume?: string) {
  const home = join(dir, "home");
  const work = join(dir, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: "sk-test-dummy",
    IS_SANDBOX: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_NON_ESSENTIAL_MODEL_CALLS: "1",
  };
  const messages: SDKMessage[] = [];
  for await (const m of query({
    prompt,
    options: { cwd: work, env, model: "claude-sonnet-4-5", sessionStore: store, resume, maxTurns: 2 },
  })) {
    messages.push(m);
  }
  return messages;
}

/** The request bodies the fake API got for main-loop turns, in order. */
function mainRequests(): Array<{ messages: Array<{ role: string; content: unknown }> }> {
  return readdirSync(logdir)
    .filter((f) => /^messages-\d+\.json$/.test(f))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(logdir, f), "utf8")))
    .filter((body) => Array.isArray(body.tools) && body.tools.length > 0);
}

test("query() mirrors into sessiondb and resumes from it", { skip: !tool && "no ../shared" }, async () => {
  const store = new SessionDbStore({ baseUrl: server.url });
  const first = await run(FIRST_PROMPT, join(dir, "config-1"), store);
  const result = first.find((m) => m.type === "result");
  assert.ok(result && result.type === "result" && result.subtype === "success", JSON.stringify(result));
  const sessionId = result.session_id;
  for (const m of first) {
    assert.ok(!(m.type === "system" && m.subtype === "mirror_error"), `mirror error: ${JSON.stringify(m)}`);
  }

  // The mirror landed in the store: listed and searchable like an imported session.
  const listed = await fetch(`${server.url}/v1/sessions?all=true`).then((r) => r.text());
  assert.ok(listed.includes(sessionId), `sessiondb lists the mirrored session: ${listed}`);
  const fromSdk = await listSessions({ dir: join(dir, "work"), sessionStore: store });
  assert.deepEqual(
    fromSdk.map((s) => [s.sessionId, s.firstPrompt]),
    [[sessionId, FIRST_PROMPT]],
    "the SDK lists it from the store's summary",
  );
  const found = await fetch(`${server.url}/v1/search?q=Ultramarine`).then((r) => r.text());
  assert.ok(found.includes(sessionId), `sessiondb finds the reply: ${found}`);

  // Resume from the store alone: a new, empty config dir has no local transcript.
  const before = mainRequests().length;
  const second = await run(SECOND_PROMPT, join(dir, "config-2"), store, sessionId);
  const result2 = second.find((m) => m.type === "result");
  assert.ok(result2 && result2.type === "result" && result2.subtype === "success", JSON.stringify(result2));
  const resumed = mainRequests().slice(before);
  assert.ok(resumed.length >= 1, "the resumed run asked the API");
  const text = JSON.stringify(resumed[0]!.messages);
  assert.ok(text.includes(FIRST_PROMPT), "the resumed request holds the first prompt");
  assert.ok(text.includes(FIRST_REPLY), "the resumed request holds the first reply");
  assert.ok(text.includes(SECOND_PROMPT), "and the new prompt");
  const roles = resumed[0]!.messages.map((m) => m.role);
  assert.deepEqual(roles.slice(0, 2), ["user", "assistant"], "first conversation comes first");

  // And the resumed turn was mirrored too.
  const search2 = await fetch(`${server.url}/v1/search?q=Vermilion`).then((r) => r.text());
  assert.ok(search2.includes(sessionId), `the resumed turn is mirrored: ${search2}`);
});
