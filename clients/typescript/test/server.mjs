// A real `omoide serve` on a free loopback port, over a temporary data directory, with the
// model-free hash embedder (fast to start) and no LLM. The command is $OMOIDE_PYTHON -m omoide
// (default: the repository's .venv python, else python3) with the repository first on
// PYTHONPATH, so the server is the code of this checkout.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function python() {
  if (process.env.OMOIDE_PYTHON) return process.env.OMOIDE_PYTHON;
  const venv = join(REPO, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

function freePort() {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

async function waitUntilUp(url, child, output) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`omoide serve exited:\n${output.join("")}`);
    try {
      if ((await fetch(`${url}/health`)).status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`omoide serve did not start:\n${output.join("")}`);
}

/** Start a server; `env` adds settings (OMOIDE_API_KEY, ...). Returns { url, stop }. */
export async function startServer(env = {}) {
  const home = mkdtempSync(join(tmpdir(), "omoide-ts-"));
  const port = await freePort();
  const child = spawn(python(), ["-m", "omoide", "serve", "--host", "127.0.0.1", "--port", String(port), "--workers", "1"], {
    cwd: home, // no developer's .env is read
    env: {
      ...process.env,
      PYTHONPATH: [REPO, process.env.PYTHONPATH].filter(Boolean).join(":"),
      HOME: home,
      OMOIDE_DATA_DIR: join(home, "data"),
      OMOIDE_EMBEDDER: "hash",
      OMOIDE_LLM_BASE_URL: "",
      API_BASE: "",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = [];
  child.stdout.on("data", (d) => output.push(String(d)));
  child.stderr.on("data", (d) => output.push(String(d)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilUp(url, child, output);
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  };
  return { url, stop };
}
