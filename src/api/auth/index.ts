/**
 * Auth API: login/logout/providers routes and the guard every other v4 plugin relies on. Other
 * feature plugins import `authContext`, `requireAdmin` and `AuthContext` from `../auth/guard.ts`.
 */
export {
  OPEN_ROUTES,
  WEBSOCKET_ROUTES,
  acceptsQueryToken,
  authContext,
  checkSameOrigin,
  ownOrigin,
  authGuard,
  authOf,
  isOpenRoute,
  requireAdmin,
  v4Base,
  type AuthContext,
} from "./guard.ts";
export { authRoutes, clientIp, loginResponse, setSessionCookie, LoginResponse } from "./routes.ts";
export { SESSION_COOKIE, clearedSessionCookie, cookieValue, sessionCookie } from "./cookies.ts";
export { coordinatorCorePlugins, type CorePluginDeps } from "./mount.ts";
export { legacyV3AuthRoutes } from "./legacy-v3.ts";
