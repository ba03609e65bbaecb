// Runs a wasm32-wasip1 program under Node's WASI (preview1): `node wasi-run.mjs PROGRAM.wasm
// ARGS...`. The cargo runner of `.ci/platforms.sh` (CARGO_TARGET_WASM32_WASIP1_RUNNER), so
// `cargo test --target wasm32-wasip1` runs the test binaries in a real WASI runtime. No
// directories are preopened: the suites run there read no files. Exits with the program's
// status.
import { readFile } from "node:fs/promises";
import { argv, env, exit } from "node:process";
import { WASI } from "node:wasi";

const [program, ...args] = argv.slice(2);
if (!program) {
  console.error("usage: node wasi-run.mjs PROGRAM.wasm [ARGS...]");
  exit(2);
}
const wasi = new WASI({ version: "preview1", args: [program, ...args], env, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
