import { Elysia, t } from "elysia";
import { hashPassword, verifyPassword } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import { USER_SORTS, type SettingsStore, type User } from "../../settings/index.ts";
import { authContext, type AuthContext } from "../auth/guard.ts";
import {
  IdResponse,
  boolQuery,
  dataResponse,
  errors,
  idBody,
  idString,
  listBody,
  listResponse,
  pageInput,
  pageQuery,
  parseBoolQuery,
} from "../openapi/schemas.ts";
import { UserCreateBody, UserPatchBody, UserSchema, userFieldsFromBody, userJson } from "./model.ts";

/**
 * Users tag (docs/API.md "Users and settings"). Visibility: an administrator sees and edits everyone;
 * any other user sees only their own record (GET /users lists just themselves, another id is a
 * 404 so ids cannot be probed). Create and delete are admin only (403). A user may change their own
 * email, name fields and password (the current password is required for the latter), never
 * is_admin, is_active or user_group. The last active administrator cannot be demoted, disabled or
 * deleted (409), so the server can always be administered.
 */
function visibleUser(settings: SettingsStore, auth: AuthContext, id: string): User {
  const u = settings.users.getById(id);
  if (!u || (!auth.isAdmin && u.username.toLowerCase() !== auth.username.toLowerCase()))
    throw new AppError("NOT_FOUND", "no such user");
  return u;
}

function guardLastAdmin(settings: SettingsStore, target: User, losesAdmin: boolean): void {
  if (losesAdmin && target.isAdmin && target.isActive && settings.users.countActiveAdmins() <= 1) {
    throw new AppError("CONFLICT", "this is the last active administrator; make another user administrator first");
  }
}

export function usersRoutes(settings: SettingsStore) {
  return new Elysia({ name: "svc-users" })
    .use(authContext)
    .get(
      "/users",
      ({ auth, query }) => {
        const page = settings.users.list(
          { username: query.username, email: query.email, group: query.group, enabled: parseBoolQuery(query.enabled) },
          pageInput(query),
          auth.isAdmin ? undefined : auth.username,
        );
        return listBody(page, userJson);
      },
      {
        query: t.Object({
          ...pageQuery(USER_SORTS),
          username: t.Optional(t.String({ maxLength: 64 })),
          email: t.Optional(t.String({ maxLength: 254 })),
          group: t.Optional(t.String({ maxLength: 128, description: "user group" })),
          enabled: boolQuery("is_active"),
        }),
        response: { 200: listResponse(UserSchema), ...errors(400, 401) },
        detail: {
          tags: ["Users"],
          summary:
            "List users (administrators: all; others: only themselves). Sort: username, email, created_at, updated_at, is_admin",
        },
      },
    )
    .post(
      "/users",
      async ({ body, set }) => {
        const u = settings.users.create({
          username: body.username,
          passwordHash: await hashPassword(body.password),
          ...userFieldsFromBody(body),
        });
        set.status = 201;
        return idBody(u.id, "user created");
      },
      {
        admin: true,
        body: UserCreateBody,
        response: { 201: IdResponse, ...errors(400, 401, 403, 409) },
        detail: { tags: ["Users"], summary: "Create a user (admin)" },
      },
    )
    .get("/users/:userId", ({ auth, params }) => ({ data: userJson(visibleUser(settings, auth, params.userId)) }), {
      params: t.Object({ userId: idString() }),
      response: { 200: dataResponse(UserSchema), ...errors(401, 404) },
      detail: { tags: ["Users"], summary: "Read a user (administrators: any; others: themselves)" },
    })
    .patch(
      "/users/:userId",
      async ({ auth, params, body }) => {
        const target = visibleUser(settings, auth, params.userId);
        const self = target.username.toLowerCase() === auth.username.toLowerCase();
        const privileged: Array<[string, unknown, unknown]> = [
          ["is_admin", body.is_admin, target.isAdmin],
          ["is_active", body.is_active, target.isActive],
          ["user_group", body.user_group, target.userGroup],
        ];
        for (const [field, wanted, current] of privileged) {
          if (wanted === undefined || wanted === current) continue;
          if (!auth.isAdmin)
            throw new AppError("FORBIDDEN", `${field}: only an administrator may change it`, {
              details: { fields: [field] },
            });
          if (self && field === "is_admin")
            throw new AppError("FORBIDDEN", "is_admin: you cannot change your own administrator flag", {
              details: { fields: [field] },
            });
        }
        guardLastAdmin(settings, target, body.is_admin === false || body.is_active === false);
        let passwordHash: string | undefined;
        if (body.password !== undefined) {
          if (self) {
            const current = settings.users.getWithSecret(target.username)?.passwordHash ?? "";
            if (body.current_password === undefined || !(await verifyPassword(body.current_password, current))) {
              throw new AppError(
                "VALIDATION",
                "current_password: required and must match when changing your own password",
                {
                  details: { fields: ["current_password"] },
                },
              );
            }
          }
          passwordHash = await hashPassword(body.password);
        }
        settings.users.update(target.id, { passwordHash, ...userFieldsFromBody(body) });
        return idBody(target.id, "user updated");
      },
      {
        params: t.Object({ userId: idString() }),
        body: UserPatchBody,
        response: { 200: IdResponse, ...errors(400, 401, 403, 404, 409) },
        detail: {
          tags: ["Users"],
          summary: "Change a user (administrators: anyone; others: own email, names and password)",
        },
      },
    )
    .delete(
      "/users/:userId",
      ({ auth, params, set }) => {
        const target = visibleUser(settings, auth, params.userId);
        guardLastAdmin(settings, target, true);
        settings.users.delete(target.id);
        set.status = 204;
      },
      {
        admin: true,
        params: t.Object({ userId: idString() }),
        response: { 204: t.Void(), ...errors(401, 403, 404, 409) },
        detail: { tags: ["Users"], summary: "Delete a user and their settings, dashboards and tokens (admin)" },
      },
    );
}
