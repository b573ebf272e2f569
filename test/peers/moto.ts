/**
 * moto's S3 server as the S3-compatible test peer (docs/STORAGE.md "Test peers"): `python -m
 * moto.server` from the venv of scripts/python-peers.sh on a free loopback port. Before the tests
 * it creates an IAM user with an access key and the bucket, then switches moto's IAM checks on, so a
 * wrong key or secret is refused the way AWS refuses it.
 */
import { pyPeersPython, waitFor, type Peer } from "../harness.ts";
import { spawnPeer, type PeerProcess } from "./process.ts";
import { freeTcpPort } from "./slapd.ts";

export const MOTO_PEER: Peer = {
  install: "run scripts/python-peers.sh (pip: moto[server]==5.2.5)",
  probe: () => {
    try {
      return (
        Bun.spawnSync([pyPeersPython(), "-c", "import moto.server, boto3, flask"], {
          stdout: "ignore",
          stderr: "ignore",
        }).exitCode === 0
      );
    } catch {
      return false; // no venv
    }
  },
};

export interface Moto extends AsyncDisposable {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  proc: PeerProcess;
}

/** Creates the user, its key, an allow-all policy and the bucket, then turns authentication on. */
const SETUP = `
import json, sys, urllib.request, boto3
url, bucket = sys.argv[1], sys.argv[2]
kw = dict(endpoint_url=url, region_name="us-east-1", aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
iam = boto3.client("iam", **kw)
iam.create_user(UserName="svc")
iam.put_user_policy(UserName="svc", PolicyName="all", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="svc")["AccessKey"]
boto3.client("s3", **kw).create_bucket(Bucket=bucket)
urllib.request.urlopen(urllib.request.Request(url + "/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"})).read()
print(json.dumps({"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}))
`;

export async function startMoto(dir: string, bucket = "svc-lake"): Promise<Moto> {
  const port = freeTcpPort();
  const endpoint = `http://127.0.0.1:${port}`;
  const proc = spawnPeer("moto", [pyPeersPython(), "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)], {
    dir,
  });
  try {
    await waitFor(
      `moto listening on ${endpoint}`,
      async () => {
        if (proc.proc.exitCode !== null)
          throw new Error(`moto exited with ${proc.proc.exitCode}: ${proc.output().slice(-2000)}`);
        return (await fetch(`${endpoint}/moto-api/data.json`)).ok;
      },
      60_000,
    );
    const setup = Bun.spawnSync([pyPeersPython(), "-c", SETUP, endpoint, bucket], { stdout: "pipe", stderr: "pipe" });
    if (setup.exitCode !== 0) throw new Error(`moto setup failed: ${setup.stderr.toString().slice(-2000)}`);
    const key = JSON.parse(setup.stdout.toString()) as { id: string; secret: string };
    return {
      endpoint,
      bucket,
      accessKeyId: key.id,
      secretAccessKey: key.secret,
      proc,
      [Symbol.asyncDispose]: async () => void (await proc.stop()),
    };
  } catch (e) {
    await proc.stop();
    throw e;
  }
}
