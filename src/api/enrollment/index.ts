import { Elysia, t } from "elysia";
import { LoginThrottle } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import type { EnrolledNode, EnrolledNodesRepo } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import { clientIp } from "../auth/routes.ts";
import { errors } from "../openapi/schemas.ts";

/**
 * Edge enrolment (docs/DEPLOY.md "Finding the edges"): an edge announces its name, node URL and
 * node token with the coordinator's enrolment token (`POST /cluster/enroll`, open to the JWT guard,
 * the enrolment token is the credential); administrators list, approve and remove the enrolled
 * edges (`/admin/edges`). The approved ones are searched beside coordinator.nodes (src/coordinator.ts).
 * Registered only with coordinator.enrollment.enable: without it there is no open enrolment.
 */
export interface EnrollmentDeps {
  repo: EnrolledNodesRepo;
  /** `Authorization` holds the enrolment token (compared in constant time). */
  admits: (authorization: string | null) => boolean;
  approval: boolean;
  maxNodes: number;
  /** Names and URLs of coordinator.nodes: an edge cannot take one. */
  configured: ReadonlyArray<{ name: string; url: string }>;
}

const NAME = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
/** Wrong enrolment tokens one address may send before it waits LOCKOUT_SEC (docs/DEPLOY.md "Finding the edges"). */
const MAX_WRONG_TOKENS = 10;
const LOCKOUT_SEC = 60;

const EnrollBody = t.Object(
  {
    name: t.String({
      pattern: NAME,
      description: "the edge's name in meta.nodes (node.enroll.name): letters, digits, . _ -, at most 64",
    }),
    url: t.String({
      minLength: 1,
      maxLength: 2048,
      description: "where this coordinator reaches the edge's node port, http(s)://host:port",
    }),
    token: t.Optional(
      t.String({
        maxLength: 1024,
        description:
          "the edge's node.http_server.token, sent back as Authorization: Bearer on every read; empty: an open node port",
      }),
    ),
  },
  { additionalProperties: false },
);

const EdgeView = t.Object({
  name: t.String(),
  url: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("approved")], {
    description: "pending: not searched until an administrator approves it",
  }),
  enrolled_at: t.Integer({ description: "first announcement, epoch ms" }),
  last_seen: t.Integer({ description: "last announcement, epoch ms" }),
  has_token: t.Boolean({ description: "the edge sent a node token (never returned)" }),
});

const view = (n: EnrolledNode) => ({
  name: n.name,
  url: n.url,
  status: n.status,
  enrolled_at: n.enrolledAt,
  last_seen: n.lastSeen,
  has_token: n.hasToken,
});

/** `http(s)://host:port[/path]` without a trailing slash; VALIDATION naming `url` otherwise. */
function nodeUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new AppError(
      "VALIDATION",
      `url: "${raw.slice(0, 200)}" is not a URL; send http(s)://host:port of the node port`,
      { details: { fields: ["url"] } },
    );
  }
  if (
    (u.protocol !== "http:" && u.protocol !== "https:") ||
    !u.port ||
    u.username ||
    u.password ||
    u.search ||
    u.hash
  ) {
    throw new AppError(
      "VALIDATION",
      "url: must be http(s)://host:port of the node port (node.http_server.listen), without credentials or query",
      { details: { fields: ["url"] } },
    );
  }
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

export function enrollmentRoutes(deps: EnrollmentDeps) {
  const params = t.Object({ name: t.String({ pattern: NAME }) });
  const notFound = (name: string) =>
    new AppError("NOT_FOUND", `no enrolled edge ${name} (GET /admin/edges lists them)`);
  // Guessing the enrolment token is slowed like guessing a password (src/auth/throttle.ts), per address.
  const throttle = new LoginThrottle(MAX_WRONG_TOKENS, LOCKOUT_SEC);
  return new Elysia({ name: "svc-enrollment" })
    .post(
      "/cluster/enroll",
      ({ body, request, server }) => {
        const ip = clientIp(server, request);
        const gate = throttle.reserve(`enroll ${ip}`, ip);
        if (!gate.allowed) {
          throw new AppError(
            "RATE_LIMITED",
            `too many wrong enrolment tokens from ${ip}; try again in ${gate.retryAfterSec} s`,
            { details: { retry_after_sec: gate.retryAfterSec } },
          );
        }
        if (!deps.admits(request.headers.get("authorization"))) {
          gate.attempt.failed();
          throw new AppError(
            "UNAUTHORIZED",
            "wrong or missing enrolment token: send Authorization: Bearer <coordinator.enrollment.token> (node.enroll.token on the edge)",
          );
        }
        gate.attempt.succeeded();
        const url = nodeUrl(body.url);
        const clash = deps.configured.find((n) => n.name === body.name || n.url === url);
        if (clash)
          throw new AppError(
            "CONFLICT",
            `${clash.name === body.name ? `the name ${body.name}` : `the url ${url}`} is already in coordinator.nodes: choose another node.enroll.name, or remove the entry there`,
          );
        const r = deps.repo.announce({
          name: body.name,
          url,
          token: body.token ?? "",
          approval: deps.approval,
          max: deps.maxNodes,
        });
        if (!r.ok && r.reason === "name_taken") {
          throw new AppError(
            "CONFLICT",
            `an edge named ${body.name} with another node token is enrolled: choose another node.enroll.name, or have an administrator remove it (DELETE /admin/edges/${body.name})`,
          );
        }
        if (!r.ok)
          throw new AppError(
            "CONFLICT",
            `${deps.maxNodes} edges are enrolled, the most coordinator.enrollment.max_nodes allows: remove one first`,
          );
        return { data: { name: r.node.name, status: r.node.status } };
      },
      {
        body: EnrollBody,
        detail: {
          tags: ["Cluster"],
          summary:
            "An edge announces its node port (enrolment token as Authorization: Bearer); approved edges are searched beside coordinator.nodes",
        },
        response: {
          200: t.Object({
            data: t.Object({ name: t.String(), status: t.Union([t.Literal("pending"), t.Literal("approved")]) }),
          }),
          ...errors(400, 401, 409, 429),
        },
      },
    )
    .use(authContext)
    .get(
      "/admin/edges",
      () => {
        const items = deps.repo.list().map(view);
        return { data: { items, total: items.length } };
      },
      {
        admin: true,
        detail: {
          tags: ["Cluster"],
          summary: "Enrolled edges, pending and approved (admin); node tokens are never returned",
        },
        response: {
          200: t.Object({ data: t.Object({ items: t.Array(EdgeView), total: t.Integer() }) }),
          ...errors(401, 403),
        },
      },
    )
    .post(
      "/admin/edges/:name/approve",
      ({ params: p }) => {
        const n = deps.repo.approve(p.name);
        if (!n) throw notFound(p.name);
        return { data: view(n) };
      },
      {
        admin: true,
        params,
        detail: { tags: ["Cluster"], summary: "Approve an enrolled edge: it is searched from now on (admin)" },
        response: { 200: t.Object({ data: EdgeView }), ...errors(401, 403, 404) },
      },
    )
    .delete(
      "/admin/edges/:name",
      ({ params: p, set }) => {
        if (!deps.repo.remove(p.name)) throw notFound(p.name);
        set.status = 204;
      },
      {
        admin: true,
        params,
        detail: {
          tags: ["Cluster"],
          summary:
            "Remove an enrolled edge: out of the fan-out at once; its next announcement enrols it again (pending with approval) (admin)",
        },
        response: { 204: t.Void(), ...errors(401, 403, 404) },
      },
    );
}
