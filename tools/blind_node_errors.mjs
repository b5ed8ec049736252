// Blind batch 3 (issue 32): real failure texts of widely used Node client libraries.
// Run by tools/collect_blind.py --batch 3 with the libraries installed in a throwaway folder:
//   NODE_PATH=<folder>/node_modules node tools/blind_node_errors.mjs <closed port> <work dir>
// Prints one JSON list of captures: {source, label, text, name, code}. Everything stays on
// 127.0.0.1: a closed port, local HTTP servers answering error statuses, bad input.
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH || ".", "x.js"));
const [closedPort, work] = process.argv.slice(2);
const closed = `127.0.0.1:${closedPort}`;
const out = [];

function versionOf(name) {
  try {
    const root = path.join(process.env.NODE_PATH, name, "package.json");
    return JSON.parse(fs.readFileSync(root, "utf8")).version;
  } catch {
    return "?";
  }
}

async function capture(library, label, action) {
  const source = `${library}@${versionOf(library)} (npm)`;
  try {
    await action();
    out.push({ source, label, text: null, note: "did not fail" });
  } catch (error) {
    const text = (error && (error.message || String(error))) || String(error);
    out.push({ source, label, text: text.slice(0, 2000), name: error?.name, code: error?.code ?? null });
  }
}

function stub(status, body, headers = {}) {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    });
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

async function withStub(status, body, run, headers = {}) {
  const server = await stub(status, body, headers);
  try {
    await run(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.close();
  }
}

// HTTP clients
const axios = require("axios");
await capture("axios", "closed port", () => axios.get(`http://${closed}/v1/items`));
await withStub(404, { message: "no such item" }, (u) => capture("axios", "HTTP 404", () => axios.get(`${u}/v1/items/9`)));
await capture("axios", "bad URL", () => axios.get("htp//nowhere"));
const got = (await import(require.resolve("got"))).default;
await withStub(503, "busy", (u) => capture("got", "HTTP 503", () => got(u, { retry: { limit: 0 } })));
await capture("got", "closed port", () => got(`http://${closed}/`, { retry: { limit: 0 } }));
const superagent = require("superagent");
await withStub(409, { error: "conflict" }, (u) => capture("superagent", "HTTP 409", () => superagent.put(`${u}/x`)));
const nodeFetch = (await import(require.resolve("node-fetch"))).default;
await capture("node-fetch", "closed port", () => nodeFetch(`http://${closed}/`));
await capture("node-fetch", "relative URL", () => nodeFetch("/relative/only"));

// database and queue drivers
const pg = require("pg");
await capture("pg", "closed port", async () => {
  const client = new pg.Client({ host: "127.0.0.1", port: Number(closedPort), user: "u", database: "d" });
  await client.connect();
});
const mysql = require("mysql2/promise");
await capture("mysql2", "closed port", () => mysql.createConnection({ host: "127.0.0.1", port: Number(closedPort) }));
await capture("mysql2", "bad URI", () => mysql.createConnection("notmysql:/x"));
const { MongoClient } = require("mongodb");
await capture("mongodb", "closed port", async () => {
  const client = new MongoClient(`mongodb://${closed}/`, { serverSelectionTimeoutMS: 800 });
  await client.connect();
});
await capture("mongodb", "bad scheme", async () => new MongoClient("mongo://x/").connect());
const Redis = require("ioredis");
await capture("ioredis", "closed port", async () => {
  const client = new Redis({ port: Number(closedPort), host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0,
    retryStrategy: () => null });
  client.on("error", () => {});
  await client.connect();
});
const { createClient } = require("redis");
await capture("redis", "closed port", async () => {
  const client = createClient({ url: `redis://${closed}`, socket: { reconnectStrategy: false } });
  client.on("error", () => {});
  await client.connect();
});
const amqp = require("amqplib");
await capture("amqplib", "closed port", () => amqp.connect(`amqp://${closed}`));
await capture("amqplib", "bad scheme", () => amqp.connect("nats://x"));
const { Kafka, logLevel } = require("kafkajs");
await capture("kafkajs", "closed port", async () => {
  const kafka = new Kafka({ brokers: [closed], retry: { retries: 0 }, connectionTimeout: 800, logLevel: logLevel.NOTHING });
  await kafka.admin().connect();
});
const cassandra = require("cassandra-driver");
await capture("cassandra-driver", "closed port", () =>
  new cassandra.Client({ contactPoints: [closed], localDataCenter: "dc1" }).connect());
const { Connection: TediousConnection } = require("tedious");
await capture("tedious", "closed port", () => new Promise((resolve, reject) => {
  const connection = new TediousConnection({ server: "127.0.0.1", options: { port: Number(closedPort), connectTimeout: 1500 },
    authentication: { type: "default", options: { userName: "u", password: "p" } } });
  connection.on("connect", (error) => (error ? reject(error) : resolve()));
  connection.connect();
}));
const { Client: EsClient } = require("@elastic/elasticsearch");
await capture("@elastic/elasticsearch", "closed port", () =>
  new EsClient({ node: `http://${closed}`, maxRetries: 0 }).info());
await withStub(404, { error: { type: "index_not_found_exception", reason: "no such index [orders]" }, status: 404 },
  (u) => capture("@elastic/elasticsearch", "HTTP 404", () => new EsClient({ node: u, maxRetries: 0 }).search({ index: "orders" })),
  { "x-elastic-product": "Elasticsearch" });

// cloud SDKs
const { S3Client, ListBucketsCommand, GetObjectCommand } = require("@aws-sdk/client-s3");
process.env.AWS_SHARED_CREDENTIALS_FILE = process.env.AWS_CONFIG_FILE = path.join(work, "aws-none");
process.env.AWS_EC2_METADATA_DISABLED = "true";
delete process.env.AWS_ACCESS_KEY_ID;
await capture("@aws-sdk/client-s3", "no credentials", () =>
  new S3Client({ region: "us-east-1", endpoint: `http://${closed}` }).send(new ListBucketsCommand({})));
await capture("@aws-sdk/client-s3", "no region", () => new S3Client({}).send(new ListBucketsCommand({})));
await withStub(403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>", (u) =>
  capture("@aws-sdk/client-s3", "HTTP 403", () =>
    new S3Client({ region: "us-east-1", endpoint: u, forcePathStyle: true, maxAttempts: 1,
      credentials: { accessKeyId: "a", secretAccessKey: "b" } }).send(new GetObjectCommand({ Bucket: "b", Key: "k" }))),
  { "Content-Type": "application/xml" });
const { BlobServiceClient } = require("@azure/storage-blob");
await capture("@azure/storage-blob", "bad connection string", async () =>
  BlobServiceClient.fromConnectionString("not a connection string"));
const { Storage } = require("@google-cloud/storage");
await withStub(401, { error: { code: 401, message: "Request is missing required authentication credential.", status: "UNAUTHENTICATED" } },
  (u) => capture("@google-cloud/storage", "HTTP 401", () =>
    new Storage({ apiEndpoint: u, projectId: "p", token: "x", retryOptions: { autoRetry: false } }).bucket("b").getMetadata()));

// SSH, LDAP, SMTP, FTP
const { Client: SshClient } = require("ssh2");
await capture("ssh2", "closed port", () => new Promise((resolve, reject) => {
  const client = new SshClient();
  client.on("error", reject).on("ready", resolve).connect({ host: "127.0.0.1", port: Number(closedPort), username: "u" });
}));
await capture("ssh2", "bad private key", () => new Promise((resolve, reject) => {
  const client = new SshClient();
  client.on("error", reject).on("ready", resolve);
  client.connect({ host: "127.0.0.1", port: Number(closedPort), username: "u", privateKey: "not a key" });
}));
const ldap = require("ldapjs");
await capture("ldapjs", "closed port", () => new Promise((resolve, reject) => {
  const client = ldap.createClient({ url: `ldap://${closed}`, reconnect: false });
  client.on("error", reject).on("connectError", reject).on("connect", resolve);
}));
await capture("ldapjs", "bad filter", async () => ldap.parseFilter("(cn=unclosed"));
const nodemailer = require("nodemailer");
await capture("nodemailer", "closed port", () =>
  nodemailer.createTransport({ host: "127.0.0.1", port: Number(closedPort) }).sendMail({ from: "a@b.c", to: "d@e.f", text: "x" }));
await capture("nodemailer", "no recipients", () =>
  nodemailer.createTransport({ jsonTransport: true }).sendMail({ from: "a@b.c", text: "x" }));
const ftp = require("basic-ftp");
await capture("basic-ftp", "closed port", () => new ftp.Client(2000).access({ host: "127.0.0.1", port: Number(closedPort) }));

// RPC, containers, clusters
const grpc = require("@grpc/grpc-js");
await capture("@grpc/grpc-js", "closed port", () => new Promise((resolve, reject) => {
  const client = new grpc.Client(closed, grpc.credentials.createInsecure());
  client.makeUnaryRequest("/svc/Method", (x) => x, (x) => x, Buffer.alloc(0), { deadline: Date.now() + 1500 },
    (error) => (error ? reject(error) : resolve()));
}));
const Docker = require("dockerode");
await capture("dockerode", "no daemon", () => new Docker({ socketPath: path.join(work, "docker.sock") }).ping());
const WebSocket = require("ws");
await withStub(404, "no", (u) => capture("ws", "HTTP 404", () => new Promise((resolve, reject) => {
  new WebSocket(u.replace("http", "ws")).on("error", reject).on("open", resolve);
})));

// parsers and validators
const Ajv = require("ajv");
const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile({ type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"],
  additionalProperties: false });
await capture("ajv", "wrong type", async () => {
  if (!validate({ n: "x", extra: 1 })) throw new Error(ajv.errorsText(validate.errors));
});
await capture("ajv", "bad schema", async () => ajv.compile({ type: "integr" }));
const yaml = require("js-yaml");
await capture("js-yaml", "bad indentation", async () => yaml.load("a:\n  b: 1\n c: 2"));
const YAML = require("yaml");
await capture("yaml", "unclosed flow", async () => YAML.parse("a: [1, 2", { prettyErrors: false }));
const { z } = require("zod");
await capture("zod", "wrong type", async () => z.object({ n: z.number().int().positive() }).parse({ n: -1.5 }));

// tokens and SaaS SDKs
const jwt = require("jsonwebtoken");
await capture("jsonwebtoken", "expired", async () => jwt.verify(jwt.sign({ exp: 1 }, "k"), "k"));
await capture("jsonwebtoken", "bad signature", async () => jwt.verify(jwt.sign({ a: 1 }, "k"), "other"));
const Stripe = require("stripe");
await withStub(402, { error: { type: "card_error", code: "card_declined", message: "Your card was declined." } }, (u) => {
  const url = new URL(u);
  const stripe = new Stripe("sk_test_x", { host: url.hostname, port: Number(url.port), protocol: "http", maxNetworkRetries: 0 });
  return capture("stripe", "HTTP 402", () => stripe.charges.create({ amount: 100, currency: "usd", source: "tok" }));
});
const OpenAI = require("openai");
await withStub(429, { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } },
  (u) => capture("openai", "HTTP 429 quota", () => new OpenAI({ apiKey: "x", baseURL: u, maxRetries: 0 }).models.list()));
const Anthropic = require("@anthropic-ai/sdk");
await withStub(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
  (u) => capture("@anthropic-ai/sdk", "HTTP 529", () => new Anthropic({ apiKey: "x", baseURL: u, maxRetries: 0 }).models.list()));
const { WebClient } = require("@slack/web-api");
await withStub(200, { ok: false, error: "not_in_channel" }, (u) =>
  capture("@slack/web-api", "not_in_channel", () =>
    new WebClient("xoxb-x", { slackApiUrl: `${u}/`, retryConfig: { retries: 0 } }).chat.postMessage({ channel: "C1", text: "x" })));

process.stdout.write(JSON.stringify(out));
process.exit(0);
