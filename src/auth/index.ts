/** Passwords, JWT sessions, revocation, login throttling, API tokens and the provider interface. */
export { AuthService, type CredentialFailure, type Identity, type LoginInput, type Session } from "./service.ts";
export { createAuthModule } from "./module.ts";
export {
  bootstrapAdmin,
  resetAdminPassword,
  setAdminPassword,
  wrapLegacyDigests,
  type BootstrapOutcome,
  type BootstrapResult,
  type FirstRunAdmin,
} from "./bootstrap.ts";
export { JwtSigner, type JwtFailure, type SessionClaims } from "./jwt.ts";
export { JWT_SECRET_FILE, jwtSecretPath, loadJwtSecret } from "./jwt-secret.ts";
export {
  BCRYPT_COST,
  LEGACY_DEFAULT_DIGEST,
  MIN_PASSWORD_LENGTH,
  hashPassword,
  randomPassword,
  WRAPPED_DIGEST_PREFIX,
  isBcryptHash,
  isSha256Hex,
  isWrappedDigest,
  sha256Hex,
  verifyPassword,
} from "./passwords.ts";
export {
  InternalPasswordProvider,
  describeProviders,
  ldapUsable,
  oauth2Usable,
  type AuthFailure,
  type AuthResult,
  type AuthUser,
  type CoordinatorConfig,
  type OAuth2MethodInfo,
  type PasswordMethodInfo,
  type PasswordProvider,
  type ProvidersInfo,
} from "./providers.ts";
export {
  MAX_PASSWORD_LENGTH,
  USERNAME_PATTERN,
  passwordLength,
  passwordProblem,
  usernameProblem,
} from "./user-rules.ts";
export { API_TOKEN_PREFIX, generateApiToken, hashApiToken } from "./api-tokens.ts";
export { AvatarCache, type Avatar } from "./avatars.ts";
export { LoginThrottle, type LoginAttempt, type Reservation, type ThrottleDecision } from "./throttle.ts";
export { SessionStore } from "./sessions.ts";
