// Node's own failure texts, for tools/collect_corpus.py: prints one JSON list of captures.
// node corpus_node_errors.mjs <mode> <stub port> <closed port> <unreadable file>
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import dns from "node:dns";

const [mode, stubPort, closedPort, unreadable] = process.argv.slice(2);
const stub = `http://127.0.0.1:${stubPort}`;
const out = [];

function describe(label, error) {
  const entry = { label, mode, name: error?.name, message: error?.message, code: error?.code };
  if (error?.cause) {
    entry.cause = { name: error.cause.name, message: error.cause.message, code: error.cause.code };
  }
  entry.string = String(error);
  return entry;
}

async function capture(label, action) {
  try {
    await action();
    out.push({ label, mode, no_failure: true });
  } catch (error) {
    out.push(describe(label, error));
  }
}

function request(url, options = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, options, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("timeout")));
  });
}

function connect(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port: Number(port) }, () => resolve(socket));
    socket.on("error", reject);
  });
}

if (mode === "plain") {
  await capture("fetch: closed port", () => fetch(`http://127.0.0.1:${closedPort}/v1/orders`));
  await capture("fetch: closed without an answer", () => fetch(`${stub}/close`));
  await capture("fetch: reset", () => fetch(`${stub}/reset`));
  await capture("fetch: AbortSignal.timeout", () => fetch(`${stub}/hang`, { signal: AbortSignal.timeout(300) }));
  await capture("fetch: aborted", () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    return fetch(`${stub}/hang`, { signal: controller.signal });
  });
  await capture("fetch: JSON body that is HTML", async () => (await fetch(`${stub}/status/502`)).json());
  await capture("http.get: closed port", () => request(`http://127.0.0.1:${closedPort}/`));
  await capture("http.get: closed without an answer", () => request(`${stub}/close`));
  await capture("http.get: reset", () => request(`${stub}/reset`));
  await capture("net.connect: closed port", () => connect(closedPort));
  await capture("write after the peer closed", async () => {
    const socket = await connect(stubPort);
    socket.write("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((r) => setTimeout(r, 200));
    await new Promise((resolve, reject) => {
      socket.on("error", reject);
      const chunk = Buffer.alloc(65536);
      const pump = () => { for (let i = 0; i < 64; i++) socket.write(chunk); setTimeout(resolve, 300); };
      pump();
    });
  });
  await capture("fs: missing file", () => fs.promises.readFile("/srv/app/config.json"));
  await capture("fs: a directory as a file", () => fs.promises.readFile("/tmp"));
  await capture("fs: mkdir over an existing folder", () => fs.promises.mkdir("/tmp"));
  await capture("fs: write to a full device", () => fs.promises.writeFile("/dev/full", "x"));
  await capture("fs: readdir of a file", () => fs.promises.readdir("/etc/hostname"));
  await capture("JSON.parse of HTML", () => JSON.parse("<html>502 Bad Gateway</html>"));
  await capture("JSON.parse of a truncated body", () => JSON.parse('{"orders": [1, 2'));
} else if (mode === "nobody") {
  await capture("fs: a file the user may not read", () => fs.promises.readFile(unreadable));
  await capture("fs: write where the user may not", () => fs.promises.writeFile("/root/out.json", "{}"));
} else if (mode === "nxdomain" || mode === "no-resolver") {
  await capture("dns.lookup", () => dns.promises.lookup("api.example.invalid"));
  await capture("fetch: unknown host", () => fetch("https://api.example.invalid/v1/orders"));
  await capture("http.get: unknown host", () => request("http://api.example.invalid/v1/orders"));
} else if (mode === "emfile") {
  await capture("fs: too many open files", async () => {
    const handles = [];
    for (let i = 0; i < 100; i++) handles.push(await fs.promises.open(unreadable));
  });
}
console.log(JSON.stringify(out));
