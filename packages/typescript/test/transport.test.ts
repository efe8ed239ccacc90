/**
 * The transport's rules against a scripted HTTP server: the token is sent, failures that are
 * safe to repeat are retried (a request the server did not handle; any failure of a request
 * that is harmless twice), others are not, and a call ends within its timeout.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { SessionDbError, SessionDbStore } from "../src/index.js";
import { startServer } from "./support.js";

/** A server answering request n (0-based) with `answer(n, request)`; counts requests. */
async function scripted(
  answer: (n: number, req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: IncomingMessage[]; close: () => Promise<void> }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(seen.push(req) - 1, req, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

function reply(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

test("a read is retried after 503 and 500, up to `retries` times", async () => {
  const s = await scripted((n, _req, res) =>
    n < 2 ? reply(res, n === 0 ? 503 : 500, { error: "busy" }) : reply(res, 200, { entries: null }),
  );
  const store = new SessionDbStore({ baseUrl: s.url });
  assert.equal(await store.load({ projectKey: "p", sessionId: "s" }), null);
  assert.equal(s.seen.length, 3);
  await s.close();
  const t = await scripted((_n, _req, res) => reply(res, 503, { error: "busy" }));
  await assert.rejects(
    new SessionDbStore({ baseUrl: t.url, retries: 1 }).load({ projectKey: "p", sessionId: "s" }),
    (e: SessionDbError) => e.status === 503 && e.message === "sessiondb server: 503: busy",
  );
  assert.equal(t.seen.length, 2);
  await t.close();
});

test("an append with uuid-less entries is not repeated after a 500, one of uuids only is", async () => {
  const s = await scripted((_n, _req, res) => reply(res, 500, { error: "disk full" }));
  const store = new SessionDbStore({ baseUrl: s.url, foldSessionSummary: () => assert.fail("no fold") });
  const key = { projectKey: "p", sessionId: "s", subpath: "subagents/agent-1" };
  await assert.rejects(store.append(key, [{ type: "tag", tag: "x" }]), /500: disk full/);
  assert.equal(s.seen.length, 1, "a uuid-less entry could be stored twice: not retried");
  await assert.rejects(store.append(key, [{ type: "user", uuid: "u" }]), /500: disk full/);
  assert.equal(s.seen.length, 4, "uuid entries are idempotent: retried twice");
  await s.close();
});

test("a call ends within its timeout, with a SessionDbError", async () => {
  const s = await scripted(() => {}); // never answers
  const store = new SessionDbStore({ baseUrl: s.url, timeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(store.listSessions("p"), (e: SessionDbError) => e.status === 0 && /300 ms/.test(e.message));
  assert.ok(Date.now() - started < 2000);
  s.seen.forEach((r) => r.socket.destroy());
  await s.close();
});

test("the token is sent as a bearer token; a wrong one is the server's 401", async () => {
  const server = await startServer({ token: "s3cret-token-0123456789abcdef" });
  try {
    const key = { projectKey: "p", sessionId: "s" };
    await assert.rejects(
      new SessionDbStore({ baseUrl: server.url }).load(key),
      (e: SessionDbError) => e.status === 401 && /missing or wrong token/.test(e.message),
    );
    await assert.rejects(new SessionDbStore({ baseUrl: server.url, token: "nope" }).load(key), /401/);
    assert.equal(await new SessionDbStore({ baseUrl: server.url, token: "s3cret-token-0123456789abcdef" }).load(key), null);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
