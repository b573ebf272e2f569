/**
 * The part of npm `oidc-provider` (which ships no types) that test/integration/oauth2-harness.ts
 * uses: the constructor with a configuration and the Node request handler.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Account {
    accountId: string;
    claims: () => Record<string, unknown>;
  }

  interface Configuration {
    clients?: Array<Record<string, unknown>>;
    claims?: Record<string, string[]>;
    scopes?: string[];
    findAccount?: (ctx: unknown, sub: string) => Account | Promise<Account | undefined> | undefined;
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean }>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
