import { Kind, TypeRegistry } from "@sinclair/typebox";
import { t } from "elysia";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, USERNAME_PATTERN, passwordProblem } from "../../auth/index.ts";
import type { User } from "../../settings/index.ts";
import { iso } from "../openapi/schemas.ts";

/** The profile members every user view shares (users list, /me, login response). */
export const profileFields = {
  username: t.String(),
  email: t.String(),
  first_name: t.String(),
  last_name: t.String(),
  user_group: t.String(),
  is_admin: t.Boolean(),
};

/** A user as the API shows it: never the password hash. */
export const UserSchema = t.Object({
  id: t.String(),
  ...profileFields,
  is_active: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});

/** The members of `profileFields` from a user (a row, or a login's user that may have none). */
export const profileJson = (
  u: Pick<User, "username" | "email" | "firstName" | "lastName" | "userGroup" | "isAdmin">,
) => ({
  username: u.username,
  email: u.email,
  first_name: u.firstName,
  last_name: u.lastName,
  user_group: u.userGroup,
  is_admin: u.isAdmin,
});

export const userJson = (u: User) => ({
  id: u.id,
  ...profileJson(u),
  is_active: u.isActive,
  created_at: iso(u.createdAt),
  updated_at: iso(u.updatedAt),
});

const name = (description: string) => t.String({ maxLength: 128, description });

/**
 * A new password: TypeBox's minLength/maxLength count UTF-16 units, the rule counts characters
 * (code points; docs/AUTH.md "Password rules"), so this kind checks with src/auth's passwordProblem.
 * The document still says minLength/maxLength, which JSON Schema counts in code points as well.
 */
const PASSWORD_KIND = "SvcPassword";
if (!TypeRegistry.Has(PASSWORD_KIND))
  TypeRegistry.Set(
    PASSWORD_KIND,
    (_schema, value) => typeof value === "string" && passwordProblem(value) === undefined,
  );
const password = (description: string) =>
  t.Unsafe<string>({
    [Kind]: PASSWORD_KIND,
    type: "string",
    minLength: MIN_PASSWORD_LENGTH,
    maxLength: MAX_PASSWORD_LENGTH,
    description,
    error: `${MIN_PASSWORD_LENGTH}-${MAX_PASSWORD_LENGTH} characters (Unicode code points)`,
  });

export const UserCreateBody = t.Object({
  username: t.String({ pattern: USERNAME_PATTERN, description: "1-64 of letters, digits, . _ @ -" }),
  password: password(`${MIN_PASSWORD_LENGTH}-${MAX_PASSWORD_LENGTH} characters; stored as bcrypt`),
  email: t.Optional(t.String({ maxLength: 254 })),
  first_name: t.Optional(name("given name")),
  last_name: t.Optional(name("family name")),
  user_group: t.Optional(name("user group (list filter `group`)")),
  is_admin: t.Optional(t.Boolean({ default: false })),
  is_active: t.Optional(t.Boolean({ default: true })),
});

export const UserPatchBody = t.Object({
  password: t.Optional(password(`${MIN_PASSWORD_LENGTH}-${MAX_PASSWORD_LENGTH} characters; stored as bcrypt`)),
  current_password: t.Optional(t.String({ maxLength: 1024, description: "required when changing your own password" })),
  email: t.Optional(t.String({ maxLength: 254 })),
  first_name: t.Optional(name("given name")),
  last_name: t.Optional(name("family name")),
  user_group: t.Optional(name("administrators only")),
  is_admin: t.Optional(t.Boolean({ description: "administrators only; never your own" })),
  is_active: t.Optional(t.Boolean({ description: "administrators only" })),
});

/** API body members → repository fields (undefined members stay unchanged). */
export const userFieldsFromBody = (b: {
  email?: string | undefined;
  first_name?: string | undefined;
  last_name?: string | undefined;
  user_group?: string | undefined;
  is_admin?: boolean | undefined;
  is_active?: boolean | undefined;
}) => ({
  email: b.email,
  firstName: b.first_name,
  lastName: b.last_name,
  userGroup: b.user_group,
  isAdmin: b.is_admin,
  isActive: b.is_active,
});
