import { Type, type Static, type TSchema, type TObject, type TProperties } from "@sinclair/typebox";
import { McpConfigSchema } from "./schema-mcp.ts";
import { HepTimeShiftSchema } from "./schema-time-shift.ts";

/**
 * The configuration schema: every key has a default and a description (unit, why). Types derive
 * from here. Keys follow the interface the docs/ pages describe (docs/API.md, docs/LINE-PROTOCOL.md, docs/STREAM.md).
 * `secret: true` marks values that `show-config` masks and that are never logged.
 * Over 400 lines: one tree of every key with its description is what `show-config` and the docs
 * are read against; splitting it by module would scatter the defaults an operator compares.
 */
const obj = <P extends TProperties>(description: string, props: P): TObject<P> =>
  Type.Object(props, { description, additionalProperties: false, default: {} });
const str = (def: string, description: string, extra: Record<string, unknown> = {}) =>
  Type.String({ default: def, description, ...extra });
const secret = (description: string) => Type.String({ default: "", description, secret: true });
const int = (def: number, description: string, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  Type.Integer({ default: def, description, minimum: min, maximum: max });
const num = (def: number, description: string, min = 0) => Type.Number({ default: def, description, minimum: min });
const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
const oneOf = <T extends string>(values: readonly T[], def: T, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: def, description: `${description} (one of: ${values.join(", ")})` },
  );
const strList = (def: string[], description: string) => Type.Array(Type.String(), { default: def, description });

const tuning = obj("DuckDB engine caps (docs/OPERATIONS.md, Engine tuning)", {
  threads: Type.Union([Type.Literal("auto"), Type.Integer({ minimum: 1, maximum: 256 })], {
    default: "auto",
    description:
      "worker threads of the query/write engine; auto = the cores the HEP ingest threads and the main thread leave, at least 2 (2 on 2 to 4 cores, 7 on 16: the flush needs about as much CPU per message as the ingest threads; docs/OPERATIONS.md, Engine tuning)",
  }),
  memory_limit: str(
    "4GB",
    "engine memory cap (DuckDB size string, e.g. 4GB or 512MiB); a flush that needs more fails with out_of_memory and is retried in smaller pieces, its rows kept in the spool; raise it and restart if that goes on",
  ),
  temp_directory: str("", "spill directory for queries larger than memory_limit; empty = tmp/ beside catalog_path"),
  sql_memory_limit: str(
    "256MB",
    "memory cap (DuckDB size string) of the engine that runs user SQL (POST /query, the MCP query tool), apart from memory_limit: a query that needs more (string_agg over many rows, a huge sort) fails with 413 instead of growing the process, and searches and flushes keep their memory (docs/OPERATIONS.md, Engine tuning)",
  ),
  sql_threads: int(1, "worker threads of the user-SQL engine", 1, 256),
  sql_max_temp_directory_size: str(
    "2GB",
    "disk the user-SQL engine may spill to, in <temp_directory>/sql (DuckDB size string); a query that needs more fails",
  ),
});

/** The same keys under node.lakehouse.tuning; one engine per process serves both (docs/OPERATIONS.md "Engine tuning"). */
const nodeTuning = obj(
  "DuckDB engine caps of the node: this build runs one engine per process for the lake writer and the node's queries, so a key set here replaces the same key of storage.lakehouse.tuning; both set to different values stops the start-up (docs/OPERATIONS.md, Engine tuning)",
  {
    threads: int(0, "worker threads; 0 = storage.lakehouse.tuning.threads", 0, 256),
    memory_limit: str("", "engine memory cap (DuckDB size string); empty = storage.lakehouse.tuning.memory_limit"),
    temp_directory: str("", "spill directory; empty = storage.lakehouse.tuning.temp_directory"),
  },
);

const ldap = obj("LDAP password login (docs/AUTH.md, LDAP login)", {
  enable: bool(false, "master switch"),
  host: str("", "space-separated hosts, tried in order (failover)"),
  port: int(389, "LDAP port", 1, 65535),
  use_ssl: bool(false, "LDAPS"),
  skip_tls: bool(false, "when false and not use_ssl, StartTLS is issued"),
  insecure_skip_verify: bool(false, "skip certificate verification"),
  server_name: str("", "TLS server name"),
  bind_dn: str("", "service account DN for the user search"),
  bind_password: secret("service account password"),
  base: str("", "search base"),
  user_filter: str("(uid=%s)", "user search filter; %s = escaped username"),
  attributes: strList(["uid", "cn", "mail", "memberOf"], "attributes read from the user entry"),
  anonymous: bool(false, "use user_dn template instead of searching"),
  user_dn: str("", "DN template with %s"),
  admin_group: str("", "group DN/CN granting admin"),
  user_group: str("", "group DN/CN granting login"),
  admin_mode: bool(false, "grant admin when the group lookup fails or is empty"),
  user_mode: bool(false, "grant login when the group lookup fails or is empty"),
  group_filter: str("(memberUid=%s)", "group search filter"),
  group_attributes: strList(["memberOf"], "group attributes"),
  use_dn_for_group_search: bool(false, "use the DN instead of the login name in group_filter"),
  position: int(1, "order in the provider list"),
  local_name_conflict: oneOf(
    ["refuse", "link"] as const,
    "refuse",
    "a directory user whose name is also a local user (users row): refuse = the login is refused with 409 and told what to do; link = the directory user logs in as that local user, with its id, group and rights (docs/AUTH.md, LDAP and local users with one name)",
  ),
});

const oauth2Provider = obj("OAuth 2.0 authorization-code provider (docs/AUTH.md, OAuth 2.0)", {
  enable: bool(false, "provider listed and usable"),
  name: str("", "stable id used in /auth/oauth2/{name}/redirect"),
  position: int(2, "order in the provider list"),
  type: str("oauth2", "provider kind"),
  provider_name: str("", "display name"),
  provider_image: str("", "display image URL"),
  auto_redirect: bool(false, "redirect on login page load"),
  client_id: str("", "client id"),
  client_secret: secret("client secret; required when use_pkce is false"),
  auth_url: str("", "authorize endpoint"),
  token_url: str("", "token endpoint"),
  profile_url: str("", "user-info endpoint"),
  redirect_url: str("", "registered redirect URI ending in /api/v4/auth/oauth2/<name>/callback"),
  scopes: strList(["openid", "email"], "requested scopes"),
  use_pkce: bool(false, "PKCE for public clients"),
  callback_url: str("", "where the browser goes after login (?token= / ?oauth_error=)"),
  skip_auto_provision: bool(false, "the user must already exist"),
  admin_groups: strList([], "groups granting admin"),
  group_claim: str("groups", "claim listing groups"),
});

export const ConfigSchema = obj("svc configuration", {
  log: obj("logging", {
    level: oneOf(["debug", "info", "warn", "error"] as const, "info", "minimum level written"),
    format: oneOf(["auto", "json", "pretty"] as const, "auto", "auto = pretty on a TTY, JSON lines otherwise"),
  }),
  runtime: obj("process-wide settings", {
    cache_dir: str(
      "",
      "where the single executable extracts its native DuckDB library; must allow exec; empty = $XDG_CACHE_HOME/svc or ~/.cache/svc",
    ),
  }),
  coordinator: obj("HTTP API, dashboard and auth (docs/API.md)", {
    enable: bool(true, "serve the API and the dashboard"),
    http_server: obj("coordinator HTTP server", {
      listen: str(":8080", "bind address host:port"),
      reuse_port: bool(
        false,
        "share listen with other processes (SO_REUSEPORT, the kernel splits connections between them); false = a taken port stops the start-up with an error",
      ),
      api_prefix: str("", "optional prefix before /api/v4"),
      read_timeout: int(30, "seconds", 1),
      write_timeout: int(30, "seconds", 1),
      max_body_bytes: int(104857600, "request body cap in bytes (PCAP import)", 1024),
      gamedata_dir: str(
        "./gamedata",
        "directory served at /gamedata/ (doom1.wad for the Doom widget), relative to the working directory (/var/lib/svc when installed); empty disables the route",
      ),
      trusted_origins: strList(
        [],
        "extra origins (scheme://host[:port]) allowed for cookie-authenticated writes (CSRF check); the server's own origin, same scheme, host and port, is always allowed",
      ),
    }),
    settings_db_path: str("./data/settings.db", "SQLite settings database (users, dashboards, mappings, tokens)"),
    replicas: int(
      1,
      'coordinator processes serving this site behind one load balancer, this one included; above 1 without shared_store.url a warning at start says that OAuth sign-ins, one-time tokens, logouts and login throttling stay per process (docs/AUTH.md "Several coordinators")',
      1,
    ),
    shared_store: obj(
      'what every coordinator replica must see alike: OAuth state and PKCE verifiers, one-time sign-in tokens, session revocations and login throttling (docs/AUTH.md "Several coordinators")',
      {
        url: Type.String({
          default: "",
          description:
            "postgres://user:password@host:port/database of the shared store (tables svc_auth_* created when absent; 2 connections per process); empty = kept in this process",
          secret: true,
        }),
      },
    ),
    jwt: obj("JSON Web Tokens", {
      secret: secret(
        "HMAC secret, at least 32 bytes (shorter stops the start); empty = 48 random bytes generated once and kept in .svc_jwt_secret beside the settings database",
      ),
      lifetime_hours: num(24, "token lifetime in hours", 0.01),
    }),
    auth: obj('password login (docs/API.md, Authentication); the string "internal" is accepted too', {
      type: oneOf(["internal", "ldap", "oauth"] as const, "internal", "primary login type"),
      admin_user: str("admin", "bootstrap administrator name"),
      admin_password_hash: secret(
        "64-char hex SHA-256 of the bootstrap admin password; empty = random password logged once",
      ),
      internal_position: int(0, "order of internal login in the provider list"),
      fallback_auth_type: oneOf(
        ["none", "internal", "ldap"] as const,
        "none",
        "tried once when the first attempt fails",
      ),
      disable_password_login: bool(false, "hide internal/LDAP and answer 403 on POST /auth/sessions"),
      max_failed_logins: int(5, "failed logins per user+IP before slowing down", 1),
      lockout_sec: int(30, "delay window after too many failed logins", 0),
      require_first_password_change: bool(
        true,
        "the dashboard asks the administrator to change the bootstrap's generated password at first login; false = the dialog has a Later button",
      ),
    }),
    ldap,
    oauth2_provider: oauth2Provider,
    api_settings: obj("static API tokens", {
      enable_token_access: bool(false, "accept API tokens in the header below"),
      auth_token_header: str("Auth-Token", "header carrying a raw API token"),
    }),
    query_timeout_sec: int(30, "search and SQL time-out in seconds", 1),
    query: obj(
      "results of user SQL (POST /query, /statistics/query, svc search --sql), searches, the call view, QoS and exports",
      {
        max_result_bytes: int(
          33554432,
          "largest result in bytes of JSON rows (for the call view: of all its statements together); rows are streamed from DuckDB and a larger result is refused with 413 PAYLOAD_TOO_LARGE naming how to narrow it (a 300 MB result otherwise cost the process 1.4 GB at its peak and kept 0.6 GB). Rows are capped separately (limit ≤ 50000)",
          1024,
        ),
      },
    ),
    imports: obj("PCAP import (POST /imports/pcap); the upload itself is capped by http_server.max_body_bytes", {
      max_records: int(
        2000000,
        "records a capture may hold (pcap: packet records; pcapng: blocks); more is refused with 413 before parsing. A 100 MiB upload of 16-byte empty records holds 6.5 M; a 100 MiB capture of SIP and RTP holds well under 1 M",
        1,
      ),
      max_concurrent: int(
        2,
        "imports running at once, from the first byte of the upload to the report; one more is refused with 429. Each holds a spooled capture of up to http_server.max_body_bytes on disk and a slice of parse memory",
        1,
      ),
    }),
    lake_chunk_sec: int(86400, "coordinator window for the chunked top-N strategy", 1),
    hep_stream: obj("live stream on /api/v4/stream/hep (docs/STREAM.md)", {
      enable: bool(false, "expose /api/v4/stream/hep"),
      allow_payload: bool(
        false,
        'hard switch for include_payload: false = no raw payload on any path of this process (coordinator and node /stream, live and history); true = sent to administrators who ask on /api/v4/stream/hep. The node /stream never sends it (no authentication; docs/STREAM.md, "Security")',
      ),
      fan_out_timeout_ms: int(2000, "node handshake time-out", 1),
      history_limit: int(200, "maximum history replay", 0),
      nodes: strList(
        [],
        "node ports (http://host:port of each node's node.http_server.listen) whose /stream the coordinator fans in from, besides the in-process broker when this process runs HEP ingest; do not list this process's own node (docs/STREAM.md)",
      ),
    }),
    nodes: Type.Array(
      Type.Union([
        Type.String({ minLength: 1, description: "base URL of a node port, http://host:port" }),
        Type.Object(
          {
            name: Type.Optional(
              Type.String({ minLength: 1, description: "name in meta.nodes and logs; default: the URL's host:port" }),
            ),
            url: Type.String({
              minLength: 1,
              description: "base URL of the node port (node.http_server.listen), http:// or https://",
            }),
            token: Type.Optional(
              Type.String({
                description: "the node's node.http_server.token, sent as Authorization: Bearer",
                secret: true,
              }),
            ),
            ca: Type.Optional(
              Type.String({
                description:
                  "PEM file of the CA that signed the node's certificate (node.http_server.cert); verifies an https:// node instead of the system's CAs",
              }),
            ),
            cert: Type.Optional(
              Type.String({
                description:
                  'PEM file of the client certificate presented to an https:// node whose node.http_server.cacert requires one (mutual TLS); with key (docs/ARCHITECTURE.md, "Node authentication")',
              }),
            ),
            key: Type.Optional(
              Type.String({ description: "PEM file of the client certificate's private key (unencrypted); with cert" }),
            ),
            timeout_ms: Type.Optional(
              Type.Integer({
                minimum: 1,
                description: "this node's time-out in ms; default coordinator.node_timeout_ms",
              }),
            ),
          },
          { additionalProperties: false },
        ),
      ]),
      {
        default: [],
        description:
          'nodes this coordinator searches besides its own lake (docs/ARCHITECTURE.md, "Coordinator over several nodes"): URLs or {name, url, token, ca, cert, key, timeout_ms}; the live stream fans in from them too. coordinator.hep_stream.nodes is folded in',
      },
    ),
    node_timeout_ms: int(
      10000,
      "time in ms one node has to answer a fanned-out search (within coordinator.query_timeout_sec for the whole request)",
      1,
    ),
    enrollment: obj('edges that announce themselves to be searched (docs/DEPLOY.md, "Finding the edges")', {
      enable: bool(
        false,
        "accept POST /api/v4/cluster/enroll from edges presenting the enrolment token; enrolled edges are searched beside coordinator.nodes",
      ),
      token: secret(
        "the enrolment token edges present (node.enroll.token), compared in constant time; empty = generated once and kept in .svc_enroll_token beside the settings database (mode 0600, read it there: it is never logged)",
      ),
      approval: bool(
        false,
        "an enrolled edge stays pending (not searched) until an administrator approves it (POST /api/v4/admin/edges/{name}/approve)",
      ),
      max_nodes: int(
        256,
        "enrolled edges at most; an announcement of a new edge beyond it is refused with 409",
        1,
        100000,
      ),
    }),
    widgets: obj("dashboard widgets", {
      control: obj("widget switches", { games: bool(true, "game widgets, relays and default game dashboards") }),
    }),
    correlation: obj("how the transaction view finds the other legs of a call", {
      headers: strList(["X-CID", "X-Call-ID"], "SIP headers whose value is the Call-ID of a related leg"),
      b2bua_suffixes: strList(["_b2b-1", "-0", "_leg2"], "Call-ID suffixes a B2BUA appends to the A-leg Call-ID"),
    }),
  }),
  node: obj("node-local endpoints (docs/ARCHITECTURE.md, Coordinator over several nodes)", {
    http_server: obj("node HTTP server: /api/v1/metadata, /stream, HEP over HTTP", {
      listen: str(
        "127.0.0.1:8081",
        'bind address host:port; loopback by default because the node port has no authentication (docs/STREAM.md, "Security"). ":8081" (or "0.0.0.0:8081", "[::]:8081") listens on every address, for a coordinator on another machine: firewall it to the coordinator, and across an untrusted network set cert and key (cacert for client certificates)',
      ),
      reuse_port: bool(
        false,
        "share listen with other processes (SO_REUSEPORT, the kernel splits connections between them); false = a taken port stops the start-up with an error",
      ),
      token: secret(
        'Bearer token a coordinator sends to POST /api/v1/search; empty = none on loopback, else generated once, kept in .svc_node_token beside the settings database and printed at first start (docs/ARCHITECTURE.md, "Node authentication")',
      ),
      open_metadata: bool(
        true,
        "/api/v1/metadata/* answer without the token, as the spec has them (docs/ARCHITECTURE.md, Node authentication); false = they need it too",
      ),
      cert: str(
        "",
        'TLS certificate path (PEM); with key the node port serves HTTPS and its /stream is wss (docs/ARCHITECTURE.md, "Node authentication"); the node token still applies',
      ),
      key: str("", "TLS key path (PEM, unencrypted)"),
      cacert: str(
        "",
        "CA bundle enforcing client certificates: a connection without a certificate this CA signed is refused at the handshake (mutual TLS); needs cert and key",
      ),
    }),
    lakehouse: obj("node engine settings", { tuning: nodeTuning }),
    enroll: obj('announce this node to a coordinator, which then searches it (docs/DEPLOY.md, "Finding the edges")', {
      enable: bool(false, "announce at start and every interval_sec; needs url and token, and a lake (the node port)"),
      url: str(
        "",
        "the coordinator's API base, http(s)://host:port of its coordinator.http_server.listen (with its coordinator.http_server.api_prefix, if any)",
      ),
      token: secret("the coordinator's enrolment token (coordinator.enrollment.token), sent as Authorization: Bearer"),
      name: str("", "this edge's name in the coordinator's meta.nodes and admin list; empty = the host name"),
      node_url: str(
        "",
        "the URL the coordinator reaches this node port at, http(s)://host:port; empty = the address node.http_server.listen is bound to (a wildcard listen such as :8081 needs node_url)",
      ),
      ca: str("", "PEM file of the CA that signed the coordinator's certificate (https url); empty = the system's CAs"),
      interval_sec: int(
        60,
        "seconds between announcements: a changed node_url or address reaches the coordinator within this time",
        1,
        86400,
      ),
    }),
  }),
  ingest: obj("capture ingest", {
    hep: obj("HEP listeners", {
      enable: bool(true, "receive HEP"),
      udp: obj("HEP over UDP", {
        enable: bool(true, "UDP listener"),
        listen: str(":9060", "bind address"),
        socket_buffer_bytes: int(33554432, "SO_RCVBUF requested for the socket; decides loss under bursts", 0),
        batch_receive: bool(
          true,
          "Linux: read up to 64 datagrams per recvmmsg(2) call into one reused buffer (≈ 1.5 µs less per packet than Bun's UDP socket); false, or a host name in listen: Bun's UDP socket",
        ),
      }),
      tcp: obj("HEP over TCP", {
        enable: bool(true, "TCP listener"),
        listen: str(":9060", "bind address"),
        max_connections: int(1024, "concurrent agent connections", 1),
        max_buffer_bytes: int(1048576, "per-connection reassembly cap; a connection over it is closed", 65536),
        idle_timeout_sec: Type.Number({
          default: 300,
          description:
            'seconds a HEP TCP or TLS connection may go without completing a valid HEP frame (decoded, with ingest.hep.auth_key when that is set) before it is closed; counted from the accept until the first one (HOMER\'s read timeout is 300 s). Bytes that complete no frame do not count, so a connection trickling bytes (slow-loris) is closed too; idle sockets would otherwise hold max_connections slots and lock real agents out; agents reconnect on their own. Fractions allowed. Counted in svc_hep_connections_closed_total{reason="idle_timeout"}',
          minimum: 0.05,
          maximum: 86400,
        }),
        frame_timeout_sec: Type.Number({
          default: 30,
          description:
            'seconds one HEP frame may take from its first byte to its last on a TCP or TLS connection; a frame still incomplete after that closes the connection (an agent writes a frame at once; a frame fed a byte at a time holds a slot). Fractions allowed. Counted in svc_hep_connections_closed_total{reason="frame_timeout"}',
          minimum: 0.05,
          maximum: 3600,
        }),
        max_connections_per_ip: int(
          16,
          "concurrent HEP TCP or TLS connections from one source address (an agent uses one or a few; 16 leaves room for several agents behind one NAT address); beyond it a connection is closed at once and counted (reason per_ip_limit), so a few hosts cannot take all of max_connections",
          1,
        ),
        reserved_for_known_percent: int(
          25,
          "percent of max_connections (rounded down) that only known addresses (those that completed a valid HEP frame within known_address_ttl_sec) may take: an unknown address is refused when only these are left (reason reserved_for_known). When every slot is taken, a known address gets the slot of the oldest connection that never sent a valid frame (reason evicted_for_known)",
          0,
          90,
        ),
        known_addresses: int(
          4096,
          'source addresses remembered as known (completed a valid HEP frame), least recently seen forgotten first; TCP and TLS share them. With several ingest threads it sizes their shared table instead (8 entries per address; docs/ARCHITECTURE.md "Slots over several threads")',
          1,
          1_000_000,
        ),
        known_address_ttl_sec: int(86400, "seconds an address stays known after its last valid HEP frame", 1),
      }),
      tls: obj(
        "HEP over TLS; on only when cert and key are set; connection limits, time-outs and known addresses come from ingest.hep.tcp",
        {
          listen: str(":9061", "bind address"),
          cert: str("", "PEM certificate path"),
          key: str("", "PEM key path"),
        },
      ),
      http: obj("HEP over HTTP POST on the node port (/api/v1/hep)", { enable: bool(true, "accept HEP over HTTP") }),
      threads: Type.Union([Type.Literal("auto"), Type.Integer({ minimum: 0, maximum: 64 })], {
        default: "auto",
        description:
          'HEP ingest threads, each receiving, decoding, parsing and encoding beside the main thread (which keeps DuckDB, the catalog and the API): N shares the UDP, TCP and TLS ports over N threads; auto = the cores less a quarter from 3 cores on, 1 on 1 or 2 cores (half the cores with spool_format csv), at least 1 and at most 16 (docs/ARCHITECTURE.md "Several ingest threads"); 1 = one thread; 0 = everything on the main thread',
      }),
      thread_nice: int(
        -10,
        "Linux nice value the HEP ingest thread asks for: above DuckDB's flush threads, so a flush never keeps the sockets from being read (the kernel would drop datagrams uncounted). Below 0 needs RLIMIT_NICE (the systemd unit sets LimitNICE=-10) or CAP_SYS_NICE; without it the thread keeps the process's priority and a warning is logged",
        -20,
        19,
      ),
      auth_key: secret("when set, HEP packets must carry this auth key (chunk 0x0e); others are dropped and counted"),
      max_clock_skew_sec: int(
        86400,
        "agent timestamps later than now+this are outside the accepted window (see time_shift)",
        0,
      ),
      max_age_days: int(3650, "agent timestamps older than this are outside the accepted window (see time_shift)", 1),
      time_shift: HepTimeShiftSchema,
    }),
    forward: obj(
      'store-and-forward relay of every accepted HEP packet to a central svc (docs/DEPLOY.md "N edges and a central writer")',
      {
        enable: bool(
          false,
          "log every accepted HEP packet durably in <state>/forward/ (beside catalog_path) and send it to url; needs url",
        ),
        url: str(
          "",
          "the central node's base URL (its node.http_server.listen), e.g. https://central:8081; batches go to POST <url>/api/v1/forward",
        ),
        token: secret("the central's node.http_server.token, sent as Authorization: Bearer"),
        ca: str("", "PEM file of the CA that signed the central's certificate (https url); empty = the system's CAs"),
        cert: str(
          "",
          'PEM file of this edge\'s client certificate, for a central whose node port requires one (node.http_server.cacert, mutual TLS); with key (docs/DEPLOY.md "N edges and a central writer")',
        ),
        key: str("", "PEM file of the client certificate's private key"),
        max_backlog_bytes: int(
          1073741824,
          "bytes of not yet acknowledged packets kept on disk; above it the oldest segment is deleted and its packets counted in svc_forward_dropped_packets_total (the edge keeps its own rows)",
          1048576,
        ),
        segment_bytes: int(
          16777216,
          "bytes per forward-log segment file; the cap drops whole segments, so keep it a small share of max_backlog_bytes",
          65536,
        ),
        batch_packets: int(5000, "packets per POST at most", 1, 1_000_000),
        batch_bytes: int(
          4194304,
          "uncompressed bytes per POST at most (a packet larger than this goes alone)",
          65536,
          67108864,
        ),
        timeout_sec: num(30, "seconds one POST may take before it counts as failed and is retried", 1),
        lag_warn_sec: num(
          60,
          "seconds of lag (age of the oldest unacknowledged packet) from which /health reports forward as lagging (warn)",
          1,
        ),
        hep: bool(
          true,
          'forward the accepted HEP packets; false: no HEP forward log (<state>/forward/*.seg) and no HEP batches (docs/DEPLOY.md "Forward log")',
        ),
        line_protocol: bool(
          true,
          "forward the accepted line-protocol requests (ingest.line_protocol); false: no log in <state>/forward/line_protocol/, nothing sent",
        ),
        otlp: bool(
          true,
          "forward the accepted OTLP requests (ingest.otlp); false: no log in <state>/forward/otlp/, nothing sent",
        ),
      },
    ),
    mirror: obj(
      'lossy live copy of every accepted HEP packet to other HEP collectors, as heplify does with several servers (docs/DEPLOY.md "Live mirror")',
      {
        destinations: strList(
          [],
          "udp://host:port or tcp://host:port; packets are copied as they are handed over (every 100 ms), never queued beyond queue_bytes, drops counted in svc_mirror_dropped_total",
        ),
        queue_bytes: int(
          4194304,
          "bytes waiting per TCP destination (not yet written to the socket); beyond it packets are dropped",
          65536,
        ),
      },
    ),
    sip: obj("SIP field extraction", {
      custom_headers: strList([], "exact header names stored in data_extra.custom_headers"),
      correlation_headers: strList(["X-CID"], "headers whose value becomes the correlation id `cid`"),
    }),
    line_protocol: obj("line-protocol receiver (docs/LINE-PROTOCOL.md)", {
      enable: bool(false, "master switch; when false the port stays free"),
      listen: str(":8086", "HTTP bind address"),
      max_body_bytes: int(8388608, "body cap in bytes; over the cap → 413", 1),
      default_precision: oneOf(["ns", "us", "ms", "s"] as const, "ns", "precision when the client sends none"),
      default_db: str("", "schema when no db/bucket; empty → main"),
      table_prefix: str("", "prepended to the sanitised measurement"),
      allow_hep_sip_call: bool(false, "structured HEP table mode"),
      max_tables: int(
        1000,
        "line-protocol tables at most (all databases together); a point that would create one more is refused with 400 (lines[].reason table_limit) while writes to existing tables go on. Each table costs views, a write buffer and a Parquet flush per interval: unbounded, one client could create tables until the appliance slows down for everybody",
        1,
      ),
      max_columns: int(
        250,
        "columns of one line-protocol table at most (time + tag and field keys; InfluxDB 3's default table limit is 250 too); points that would add more are refused with 400 (lines[].reason column_limit). A flush holds buffers per column: with tuning.memory_limit 1GB a table of 5000 columns (one row) or of 1000 columns (600 rows) ran out of DuckDB memory on every retry, so its rows never reached Parquet; 250 columns x 10000 rows flush",
        2,
      ),
      read_timeout_sec: int(30, "seconds", 1),
      write_timeout_sec: int(30, "seconds", 1),
      cert: str("", "TLS certificate path"),
      key: str("", "TLS key path"),
      cacert: str("", "CA bundle enforcing client certificates"),
    }),
    otlp: obj(
      "OpenTelemetry (OTLP) receiver: traces, metrics and logs into otlp_traces, otlp_metrics, otlp_logs (docs/OTLP.md)",
      {
        enable: bool(false, "master switch; when false both ports stay free. Needs storage.lakehouse.enable"),
        http: obj("OTLP/HTTP (protobuf and JSON on /v1/traces, /v1/metrics, /v1/logs)", {
          listen: str(":4318", "bind address; empty = no OTLP/HTTP"),
        }),
        grpc: obj("OTLP/gRPC (the collector services' Export methods)", {
          listen: str(":4317", "bind address; empty = no OTLP/gRPC"),
        }),
        max_body_bytes: int(
          8388608,
          "request cap in bytes (HTTP body after gzip inflation, gRPC message); over it → 413 / RESOURCE_EXHAUSTED",
          1024,
        ),
        max_inflight_bytes: int(
          16777216,
          'bytes of OTLP requests (compressed and inflated) read and decoded at once, HTTP and gRPC together; a request that does not fit beside the others is refused with 429 + Retry-After / RESOURCE_EXHAUSTED and the exporter retries. Decoding multiplies a body in memory, so this bounds the receiver\'s memory (docs/OTLP.md "Limits"); a lone request is always admitted',
          1024,
        ),
        max_attributes: int(
          128,
          "attributes kept per item (resource, scope, span, span event, link, log record, data point, exemplar) like OpenTelemetry's attribute count limit; the rest are dropped, counted in dropped_attributes_count, svc_otlp_attributes_dropped_total and the partial success message",
          1,
        ),
        read_timeout_sec: int(30, "OTLP/HTTP idle time-out in seconds", 1),
        cert: str("", "TLS certificate path (both transports); with key"),
        key: str("", "TLS key path"),
        cacert: str("", "CA bundle enforcing client certificates"),
      },
    ),
    hep_stream: obj("node live-event ring (docs/STREAM.md)", {
      enable: bool(
        false,
        'keep a ring of recent events and serve /stream on the node port. While on, the HEP ingest thread copies every live packet (a 32-byte header, the addresses, the payload) for the ring whether or not somebody subscribes, so history works for the first subscriber; off by default because that copy costs every packet (docs/STREAM.md, "What the ring costs")',
      ),
      buffer_size: int(
        10000,
        "ring capacity (events); the ring keeps the captured bytes of its events (about the packet size each)",
        1,
      ),
      max_subscribers: int(
        32,
        "subscribers at most (count) of this process's broker, node /stream and coordinator clients together (or of the coordinator's fan-in without HEP ingest); at the cap others are refused with close code 1013, an administrator takes the oldest anonymous subscriber's slot instead (docs/STREAM.md, \"Subscriber slots\")",
        1,
      ),
      max_subscribers_per_address: int(
        4,
        'subscribers at most (count) of anonymous node /stream clients from one remote address; each coordinator client fanning in takes one slot of the coordinator\'s address, so raise it on a node listed in coordinator.hep_stream.nodes (docs/STREAM.md, "Subscriber slots")',
        1,
      ),
      max_subscribers_per_user: int(
        8,
        'subscribers at most (count) of one authenticated user of /api/v4/stream/hep, administrators included (docs/STREAM.md, "Subscriber slots")',
        1,
      ),
      per_sub_queue_len: int(256, "backpressure bound per subscriber", 1),
      rate_per_sub_pps: int(500, "events per second per subscriber; 0 = unlimited", 0),
    }),
  }),
  storage: obj("storage", {
    lakehouse: obj("DuckLake-format lake (docs/DUCKLAKE.md, docs/STORAGE.md)", {
      enable: bool(true, "run the lake writer in this process"),
      catalog_type: oneOf(
        ["sqlite", "postgres"] as const,
        "sqlite",
        'SQL catalog kind: sqlite (a file, one writer) or postgres (a shared DuckLake catalog in PostgreSQL, several writers on one data_path; docs/DUCKLAKE.md "PostgreSQL catalog")',
      ),
      catalog_path: str(
        "./data/catalog.sqlite",
        'sqlite: the catalog file; postgres: postgres://user:password@host:port/database (show-config masks the password; docs/DUCKLAKE.md "PostgreSQL catalog")',
      ),
      state_path: str(
        "",
        "directory of this process's spool, temporary files and locks; empty = the directory of catalog_path (sqlite) or ./data/state (postgres). Each writer of a shared postgres catalog needs its own",
      ),
      data_path: str(
        "./data/lake/",
        "Parquet location: a local directory, s3://<bucket>/<prefix>/ or az://<container>/<prefix>/ (docs/STORAGE.md)",
      ),
      batch_size: int(10000, "rows buffered per table before a Parquet file is written", 1),
      flush_interval_sec: num(30, "longest time a row waits in the buffer before it is written", 0.05),
      row_group_rows: int(16384, "rows per Parquet row group", 1024),
      spool_format: oneOf(
        ["csv", "parquet"] as const,
        "parquet",
        'how sealed rows wait for their flush: parquet (each seal already a Parquet row group, the flush joins them without DuckDB; docs/STORAGE.md "Parquet written by svc") or csv (the earlier spool: DuckDB parses the rows again at the flush, about a third more CPU per message)',
      ),
      max_buffered_rows: int(
        200000,
        "rows accepted but not yet in Parquet, all tables; above it new rows are dropped and counted (bounded memory)",
        1000,
      ),
      min_free_bytes: int(
        1073741824,
        "bytes; /health warns when the file system of data_path or of the catalog (and spool) has less free space than this: flushes start failing when the disk is full",
        0,
      ),
      reserve_free_bytes: int(
        67108864,
        "bytes kept free for Parquet: below this on the spool's file system (beside catalog_path) new rows are refused (line protocol 503, HEP counted as lost, reason disk_full) so a flush can still write Parquet and free the spool; /health fails below it. 0 = no reserve",
        0,
      ),
      s3: obj("S3-compatible bucket of an s3:// data_path (docs/STORAGE.md)", {
        region: str("", "region; empty = AWS_REGION, AWS_DEFAULT_REGION, else us-east-1"),
        access_key_id: str("", "access key; empty = AWS_ACCESS_KEY_ID from the environment"),
        secret_access_key: secret("secret key; empty = AWS_SECRET_ACCESS_KEY from the environment"),
        endpoint: str(
          "",
          "full URL with scheme of an S3-compatible server (MinIO, Ceph, R2); empty = AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS",
        ),
      }),
      azure: obj("Azure Blob container of an az:// data_path (docs/STORAGE.md)", {
        account_name: str("", "storage account (with account_key)"),
        account_key: secret("account key (base64)"),
        connection_string: secret("connection string; wins over account_name and account_key"),
        endpoint: str(
          "",
          "blob endpoint, a full URL with scheme (emulators); empty = https://<account>.blob.core.windows.net",
        ),
      }),
      store_timeout_sec: int(
        30,
        'seconds; with an s3:// or az:// data_path, a store request with no answer within this (plus 1 s per MiB of a put) fails, so a store that stopped answering fails the flush with reason store and /health shows it (docs/STORAGE.md "When the store is down")',
        1,
        3600,
      ),
      read_cache_bytes: int(
        10737418240,
        'bytes; with an s3:// or az:// data_path, Parquet files are read from a local cache beside catalog_path (lake-cache/) holding at most this much; least recently used files are dropped (docs/STORAGE.md "Read cache")',
        0,
      ),
      tuning,
      search_buffer: bool(true, "union the in-memory buffer tables (mem_hep_proto_*) into searches"),
      search: obj("search strategies", {
        lake_topn_strategy: oneOf(
          ["newest", "stream", "chunked", "full"] as const,
          "newest",
          "newest-N over ranges wider than one hour. newest (exact, the default): the buffer and the files newest first by the catalog's time statistics, stopping once the N newest rows are proven; chunked (exact): lake_chunk_sec windows newest first; full (exact): one ordered scan; stream: a SAMPLE, the first N rows the scan meets in the newest files, not the newest N and not the same rows on every repeat; it was once the default, and a sample atop 'Last 24 hours' misled users (docs/ARCHITECTURE.md, Search)",
        ),
        lake_chunk_sec: int(3600, "node window for chunked", 1),
        lazy_payload: bool(true, "narrow scan, then hydrate payload/data_extra by uuid"),
        count_cap: int(
          100000,
          "meta.pagination.total of a FILTERED search counts matches up to this many; beyond, total is this number and total_exact false (a window without a filter is always counted exactly, from the catalog's statistics; docs/ARCHITECTURE.md, Totals and paging)",
          1,
        ),
      }),
      auto_repair_catalog: bool(
        true,
        "startup repair of duplicate catalog rows: backed up to <catalog>.bak-<time> first, the most recent of each row kept, counts logged; false: only logged (docs/OPERATIONS.md)",
      ),
      compaction: obj("merging small files (docs/ARCHITECTURE.md, Maintenance)", {
        enable: bool(true, "run the compactor (retention and snapshot expiry run on its timer either way)"),
        engine: oneOf(
          ["duckdb", "native"] as const,
          "duckdb",
          "duckdb: the default merge, files below max_file_size_bytes merged into files up to that size, at most 32 merges and max_compacted_files output files per table per cycle; native: per date partition once untouched for min_age_sec, into files of target_file_size_bytes, with row-count checks in the swap (switches itself off on duplicate catalog snapshots). Tables native cannot merge (not partitioned) get the default merge",
        ),
        check_interval_sec: int(60, "seconds between compaction checks", 1),
        target_file_size_bytes: int(
          536870912,
          "engine native: size of a merged file (bytes of Parquet), reached when memory_limit lets one merge hold that much (8 x (memory_limit - 128MB) uncompressed); refused with engine duckdb",
          1,
        ),
        max_row_group_bytes: int(
          268435456,
          "bytes (uncompressed); a file with a larger row group is not merged (native: its whole partition is skipped). Also a fifth of memory_limit is the cap: this default is capped to it, a value set above it is refused at start",
          1,
        ),
        min_age_sec: int(
          300,
          "duckdb: a file is merged once committed this long ago; native: a partition once no file was added to it for this long",
          0,
        ),
        max_file_size_bytes: int(
          67108864,
          "default merge: files from this size on are not merged again, and merged files grow up to it",
          1,
        ),
        max_compacted_files: int(
          32,
          "default merge: output files per table per cycle (merges are capped at 32 as well)",
          1,
        ),
        rows_per_page: int(
          512,
          "default merge: rows per Parquet data page of a merged file's columns (a narrow column's pages hold at least 8 KiB), with an offset index, so a search fetches a row by decoding a page instead of its whole row group (docs/STORAGE.md, Paged data files); 0 keeps DuckDB's one page per column chunk",
          0,
        ),
        memory_limit: str(
          "224MB",
          "DuckDB memory cap of the compaction's own engine (one thread, spilling to <tuning.temp_directory>/compaction), apart from tuning.memory_limit so a merge never takes memory from searches and flushes. One merge holds at most 8 x (memory_limit - 128MB) uncompressed bytes (768 MB at the default, about 90 MB of HEP Parquet; rows wider than 1 KB count eight times); a merge that still runs out of memory is written in smaller pieces and the table's merges stay smaller for a while; files with row groups above a fifth of it are not merged, whatever max_row_group_bytes says (docs/ARCHITECTURE.md, Compaction memory). At least 192MB",
        ),
      }),
      retention: obj("retention", {
        days: int(14, "delete data older than this many days; 0 keeps everything", 0),
      }),
      snapshot_retention_sec: int(
        86400,
        "time travel window: older snapshots are expired and the files only they saw are deleted",
        0,
      ),
      backups_kept: int(
        3,
        "catalog backups kept (<catalog>.bak-<timestamp>, by svc catalog backup and the start-up repair); older ones are deleted after each backup; 0 deletes none",
        0,
      ),
    }),
  }),
  mcp: McpConfigSchema,
});

export type Config = Static<typeof ConfigSchema>;
export type SchemaNode = TSchema;
