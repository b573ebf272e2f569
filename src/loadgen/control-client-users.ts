/**
 * User commands of `loadgen shell` (docs/LOADGEN.md "tui and shell"): `users`, `useradd <name>
 * [admin]`, `userdel <name>`, `passwd <name>`. Passwords come from the next input line, never from
 * the command line (a command line shows up in `ps` and shell histories).
 */
import { call, logIn, type ClientFlags } from "./control-client-http.ts";

export const USER_COMMANDS = ["users", "useradd", "userdel", "passwd"];

interface UserView {
  username: string;
  admin: boolean;
  active: boolean;
}

/** Runs one user command; `nextLine` reads the following input line (for a password). */
export async function runUserCommand(
  f: ClientFlags,
  cmd: string,
  args: string[],
  nextLine: () => Promise<string | undefined>,
  out: (line: string) => void,
): Promise<void> {
  const name = () => {
    if (!args[0]) throw new Error(`${cmd} needs a user name`);
    return encodeURIComponent(args[0]);
  };
  const password = async (what: string) => {
    const line = await nextLine();
    if (line === undefined || line === "") throw new Error(`${cmd}: the ${what} goes on the next line`);
    return line;
  };
  if (cmd === "users") {
    const { users } = (await call(f, "/api/v1/users")) as { users: UserView[] };
    for (const u of users) out(`${u.username} ${u.admin ? "admin" : "user"} ${u.active ? "active" : "inactive"}`);
  } else if (cmd === "useradd") {
    if (args.length > 2 || (args[1] !== undefined && args[1] !== "admin")) throw new Error("useradd <name> [admin]");
    const username = decodeURIComponent(name());
    const u = (await call(f, "/api/v1/users", {
      username,
      password: await password("password"),
      admin: args[1] === "admin",
    })) as UserView;
    out(`user ${u.username} added${u.admin ? " (admin)" : ""}`);
  } else if (cmd === "userdel") {
    await call(f, `/api/v1/users/${name()}`, undefined, "DELETE");
    out(`user ${args[0]} deleted`);
  } else if (cmd === "passwd") {
    const path = `/api/v1/users/${name()}`;
    // Your own password needs the current one first (as in the appliance).
    const own = f.user !== "" && f.user.toLowerCase() === args[0]!.toLowerCase();
    const current = own ? await password("current password") : undefined;
    const next = await password("new password");
    await call(f, path, { password: next, ...(current === undefined ? {} : { current_password: current }) }, "PATCH");
    out(`password of ${args[0]} changed`);
    // The change ended your own tokens (docs/LOADGEN.md "Control API"): log in again with the new password.
    if (own) {
      f.password = next;
      await logIn(f);
    }
  }
}
