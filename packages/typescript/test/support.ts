/**
 * What the tests share: the sessiondb binary (`SESSIONDB_BIN`, else built with cargo from
 * this checkout), a `sessiondb serve` on a fresh database, and the offline fake Messages API
 * of `../shared/oracle/tool` (skipped loudly when `../shared` is missing, a failure under CI).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The package folder (tests run from `build-test/test/`). */
export const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The repository checkout the package sits in. */
export const REPO = resolve(PACKAGE, "..", "..");
/** `../shared` beside the checkout. */
export const SHARED = resolve(REPO, "..", "shared");

let built: string | undefined;

/** The sessiondb binary: `SESSIONDB_BIN`, else `cargo build --bin sessiondb` here. */
export function binary(): string {
  const given = process.env.SESSIONDB_BIN;
  if (given) {
    if (!existsSync(given)) throw new Error(`SESSIONDB_BIN names no file: ${given}`);
    return given;
  }
  if (built) return built;
  const cargo = spawnSync("cargo", ["build", "--quiet", "--bin", "sessiondb"], {
    cwd: REPO,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (cargo.status !== 0) throw new Error("cargo build --bin sessiondb failed; set SESSIONDB_BIN");
  const target = process.env.CARGO_TARGET_DIR ? resolve(REPO, process.env.CARGO_TARGET_DIR) : join(REPO, "target");
  built = join(target, "debug", "sessiondb");
  return built;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `sessiondb-ts-${prefix}-`));
}

/** The first line of a child's stdout that starts with `prefix` (rest of the line). */
function firstLine(child: ChildProcess, prefix: string, what: string): Promise<string> {
  return new Promise((resolveLine, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (why: string) => reject(new Error(`${what} did not start: ${why}`));
    child.once("exit", (code) => fail(`exited with ${code}`));
    child.once("error", (e) => fail(String(e)));
    lines.on("line", (line) => {
      if (line.startsWith(prefix)) resolveLine(line.slice(prefix.length).trim());
    });
  });
}

/** A running child process with an address. */
export class Running {
  constructor(
    readonly child: ChildProcess,
    readonly url: string,
    readonly dir: string,
  ) {}

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<number | null>((r) => this.child.once("exit", (code) => r(code)));
      this.child.kill("SIGTERM");
      const code = await exited;
      rmSync(this.dir, { recursive: true, force: true });
      return code;
    }
    rmSync(this.dir, { recursive: true, force: true });
    return this.child.exitCode;
  }
}

/** `sessiondb serve` on a free loopback port with a new database (`db`: another one). */
export async function startServer(options: { token?: string; db?: string } = {}): Promise<Running> {
  const dir = tempDir("serve");
  const db = options.db ?? join(dir, "store.db");
  const env = { ...process.env };
  delete env.SESSIONDB_TOKEN;
  if (options.token) env.SESSIONDB_TOKEN = options.token;
  const child = spawn(binary(), ["--db", db, "serve", "--addr", "127.0.0.1:0"], {
    stdio: ["ignore", "pipe", "inherit"],
    env,
  });
  const url = await firstLine(child, "listening on ", "sessiondb serve");
  return new Running(child, url, dir);
}

/** The fake Messages API's folder, or `undefined` (with a loud note) when `../shared` is
 * missing; under CI that is an error. */
export function oracleTool(): string | undefined {
  const tool = join(SHARED, "oracle", "tool");
  if (existsSync(join(tool, "fakeapi.py"))) return tool;
  const why = `${tool}/fakeapi.py is missing (../shared beside the checkout)`;
  if (process.env.CI === "true") throw new Error(why);
  console.warn(`SKIPPED: ${why}`);
  return undefined;
}

/** The fake API serving `turnsFile`, logging every request body into `logdir`. */
export async function startFakeApi(tool: string, turnsFile: string, logdir: string): Promise<Running> {
  const child = spawn(
    "python3",
    [join(tool, "fakeapi.py"), "--port", "0", "--logdir", logdir, "--turns", turnsFile, "--max-seconds", "600"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const port = await firstLine(child, "PORT ", "the fake API");
  return new Running(child, `http://127.0.0.1:${port}`, tempDir("fakeapi-unused"));
}
