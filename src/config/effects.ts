import { AppError } from "../core/index.ts";
import { isSet } from "./defaults.ts";
import type { Config } from "./schema.ts";
import { tuningConflicts } from "./tuning.ts";

/**
 * A configuration key that is accepted does something; otherwise the start-up refuses it and says
 * why (docs/STYLE.md "Configuration"). These keys are in the schema because the interface lists
 * them, but this build has nothing that reads them, or they contradict another key. Each rule is
 * `key: reason`; docs/OPERATIONS.md "Configuration keys refused at start" lists them.
 */
interface Rule {
  key: string;
  /** The key's value makes it a problem (default: it was set to something other than its default). */
  when?: (config: Config) => boolean;
  reason: string;
}

const remote = (c: Config) => /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(c.storage.lakehouse.data_path);
const UNUSED_STORE =
  "storage.lakehouse.data_path is a local directory: the object-store keys do nothing; remove the key";

const RULES: Rule[] = [
  {
    key: "coordinator.lake_chunk_sec",
    reason:
      'a coordinator over several nodes asks each node for its newest rows and merges them exactly (docs/ARCHITECTURE.md "Coordinator over several nodes"); each node cuts its own window into chunks with storage.lakehouse.search.lake_chunk_sec, so a coordinator window would change nothing: set that key on the nodes',
  },
  ...["region", "access_key_id", "secret_access_key", "endpoint"].map((k) => ({
    key: `storage.lakehouse.s3.${k}`,
    when: (c: Config) => !remote(c) && isSet(c, `storage.lakehouse.s3.${k}`),
    reason: UNUSED_STORE,
  })),
  ...["account_name", "account_key", "connection_string", "endpoint"].map((k) => ({
    key: `storage.lakehouse.azure.${k}`,
    when: (c: Config) => !remote(c) && isSet(c, `storage.lakehouse.azure.${k}`),
    reason: UNUSED_STORE,
  })),
  {
    key: "storage.lakehouse.compaction.engine",
    when: (c) =>
      remote(c) && c.storage.lakehouse.compaction.enable && c.storage.lakehouse.compaction.engine === "native",
    reason:
      'the native compaction engine rewrites files in place on a local data_path only; with an s3:// or az:// data_path use engine "duckdb", the default merge (docs/STORAGE.md "Compaction, retention and orphans")',
  },
  {
    key: "ingest.hep.tls.cert",
    when: (c) => (c.ingest.hep.tls.cert === "") !== (c.ingest.hep.tls.key === ""),
    reason: "HEP over TLS starts only with both ingest.hep.tls.cert and ingest.hep.tls.key; set both or neither",
  },
  {
    key: "ingest.forward.url",
    when: (c) => c.ingest.forward.enable && !/^https?:\/\/[^/\s]+/i.test(c.ingest.forward.url),
    reason: "ingest.forward.enable needs the central node's base URL, http:// or https:// (docs/DEPLOY.md)",
  },
  {
    key: "node.enroll.url",
    when: (c) => c.node.enroll.enable && !/^https?:\/\/[^/\s]+/i.test(c.node.enroll.url),
    reason:
      'node.enroll.enable needs the coordinator\'s API base URL, http:// or https:// (docs/DEPLOY.md "Finding the edges")',
  },
  {
    key: "node.enroll.token",
    when: (c) => c.node.enroll.enable && c.node.enroll.token === "",
    reason:
      'node.enroll.enable needs the coordinator\'s enrolment token (coordinator.enrollment.token there; docs/DEPLOY.md "Finding the edges")',
  },
  {
    key: "node.enroll.enable",
    when: (c) => c.node.enroll.enable && !c.storage.lakehouse.enable,
    reason:
      'an edge announces its node port, which serves its lake: node.enroll needs storage.lakehouse.enable (docs/DEPLOY.md "Finding the edges")',
  },
  {
    key: "node.enroll.ca",
    when: (c) => c.node.enroll.ca !== "" && !/^https:\/\//i.test(c.node.enroll.url),
    reason: "node.enroll.ca verifies an https:// coordinator; over http:// it would do nothing",
  },
  {
    key: "ingest.forward.enable",
    when: (c) =>
      c.ingest.forward.enable && (!c.storage.lakehouse.enable || (!c.ingest.hep.enable && c.ingest.forward.hep)),
    reason:
      "the forward log sits beside the edge's own lake and takes the packets HEP ingest accepts: it needs storage.lakehouse.enable, and ingest.hep.enable unless ingest.forward.hep is false",
  },
  {
    key: "ingest.forward.enable",
    when: (c) =>
      c.ingest.forward.enable && !c.ingest.forward.hep && !c.ingest.forward.line_protocol && !c.ingest.forward.otlp,
    reason:
      "ingest.forward.hep, line_protocol and otlp are all false: nothing would be forwarded; turn one on or set ingest.forward.enable false",
  },
  {
    key: "ingest.mirror.destinations",
    when: (c) => c.ingest.mirror.destinations.some((d) => !/^(udp|tcp):\/\/[^:/\s]+:\d{1,5}$/.test(d)),
    reason: "each destination is udp://host:port or tcp://host:port",
  },
  ...["threads", "memory_limit", "temp_directory"].map((k) => ({
    key: `node.lakehouse.tuning.${k}`,
    when: (c: Config) => !c.storage.lakehouse.enable && isSet(c, `node.lakehouse.tuning.${k}`),
    reason: "this process runs no engine (storage.lakehouse.enable is false)",
  })),
];

/** `key: reason` for every key of `config` that would do nothing, or that contradicts another. */
export function refusedKeys(config: Config): string[] {
  const out = RULES.filter((r) => (r.when ? r.when(config) : isSet(config, r.key))).map((r) => `${r.key}: ${r.reason}`);
  return [...out, ...tuningConflicts(config)];
}

/**
 * Keys that do nothing in this process but are accepted as the spec says, with one warning each
 * (docs/OPERATIONS.md "Keys accepted with a warning"): a coordinator-only process does not start
 * the line-protocol or OTLP receiver, which write into the lake of their own process.
 */
export function configWarnings(config: Config): string[] {
  const out: string[] = [];
  if (!config.storage.lakehouse.enable) {
    if (config.ingest.line_protocol.enable)
      out.push(
        "ingest.line_protocol.enable: no line-protocol listener in this process: the receiver writes into the lake of its own process and storage.lakehouse.enable is false (a coordinator-only process)",
      );
    if (config.ingest.otlp.enable)
      out.push(
        "ingest.otlp.enable: no OTLP listener in this process: the receiver writes into the lake of its own process and storage.lakehouse.enable is false (a coordinator-only process)",
      );
  }
  // Several coordinators: declared by coordinator.replicas, or implied by sharing the listener
  // (SO_REUSEPORT); nothing else tells one process about the others (docs/AUTH.md "Several coordinators").
  const c = config.coordinator;
  if (c.enable && c.shared_store.url === "") {
    if (c.replicas > 1)
      out.push(
        `coordinator.replicas: ${c.replicas} coordinators without coordinator.shared_store.url: OAuth sign-ins, one-time tokens, logouts and login throttling stay per process, so a sign-in finished on another replica fails, a logout holds on one replica only and failed logins are counted per replica; set coordinator.shared_store.url (PostgreSQL) or use sticky sessions`,
      );
    else if (c.http_server.reuse_port)
      out.push(
        "coordinator.http_server.reuse_port: coordinators sharing one port without coordinator.shared_store.url keep OAuth sign-ins, one-time tokens, logouts and login throttling per process; set coordinator.shared_store.url (PostgreSQL)",
      );
  }
  if (c.enable && c.replicas > 1 && c.jwt.secret === "")
    out.push(
      `coordinator.replicas: ${c.replicas} coordinators with an empty coordinator.jwt.secret: each signs with its own generated secret unless they share one settings directory, and a session from one replica is refused by the others; set coordinator.jwt.secret alike on every replica`,
    );
  return out;
}

/** Throws CONFIG_INVALID (exit 2 in `svc serve`) naming every such key. */
export function checkConfigEffects(config: Config): void {
  const bad = refusedKeys(config);
  if (bad.length > 0)
    throw new AppError("CONFIG_INVALID", `invalid configuration:\n  ${bad.join("\n  ")}`, { details: { errors: bad } });
}

/** For tests and docs: the keys these rules cover. */
export const REFUSED_KEY_RULES: ReadonlyArray<{ key: string; reason: string }> = RULES.map((r) => ({
  key: r.key,
  reason: r.reason,
}));
