import { MIN_PASSWORD_LENGTH } from "./passwords.ts";

/**
 * What a username and a password of an internal user must look like (docs/AUTH.md "Password
 * rules"): the appliance's users API and loadgen's control-API users (docs/LOADGEN.md "Control
 * API") check the same rules.
 */
export const MAX_PASSWORD_LENGTH = 1024;
export const USERNAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$";
const USERNAME_RE = new RegExp(USERNAME_PATTERN);

/** A message saying what is wrong with a username, or undefined when it is acceptable. */
export function usernameProblem(username: string): string | undefined {
  return USERNAME_RE.test(username)
    ? undefined
    : "username: 1-64 of letters, digits, . _ @ - (starting with a letter or digit)";
}

/**
 * A password's length in characters, Unicode code points, not UTF-16 units: four emoji are four
 * characters, not eight (docs/AUTH.md "Password rules").
 */
export function passwordLength(password: string): number {
  let n = 0;
  for (const _ of password) n++;
  return n;
}

/** A message saying what is wrong with a new password, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = passwordLength(password);
  if (length < MIN_PASSWORD_LENGTH) return `password: at least ${MIN_PASSWORD_LENGTH} characters`;
  if (length > MAX_PASSWORD_LENGTH) return `password: at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}
