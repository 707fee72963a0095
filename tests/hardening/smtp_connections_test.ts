/**
 * SMTP connections are capped in total (SMTP_MAX_CONNECTIONS) and per client
 * address (SMTP_MAX_CONNECTIONS_PER_ADDRESS), over real TCP connections to the
 * real listener. Loopback has every 127.x.y.z address, so a client can come
 * from several addresses by binding its end (`localAddress`).
 */
import assert from "node:assert/strict";
import net from "node:net";
import { testConfig } from "../_helpers/app.ts";
import { MAIL_DOMAIN, withInboxes } from "../inboxes/_support.ts";

/** A raw client connection: its first reply, and whether the server closed it. */
interface Client {
  /** The first reply line (the greeting, or the refusal). */
  first: string;
  /** Resolves when the server has ended the connection. */
  closed: Promise<void>;
  isClosed(): boolean;
  /** Sends a command line and resolves to its reply line. */
  command(line: string): Promise<string>;
  /** Closes our end. */
  end(): Promise<void>;
}

/** Connects to the listener from `localAddress` and reads the first reply line. */
function connect(port: number, localAddress = "127.0.0.1"): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress });
    let buffer = "";
    let closed = false;
    const waiting: Array<(line: string) => void> = [];
    const closedPromise = new Promise<void>((done) =>
      socket.on("close", () => {
        closed = true;
        done();
      })
    );
    socket.setEncoding("utf8");
    socket.on("error", () => {}); // A reset after a refusal is a close like any other.
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf("\r\n")) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (line[3] === "-") continue; // Only the last line of a multi-line reply.
        waiting.shift()?.(line);
      }
    });
    const client: Client = {
      first: "",
      closed: closedPromise,
      isClosed: () => closed,
      command: (line) =>
        new Promise((done) => {
          waiting.push(done);
          socket.write(`${line}\r\n`);
        }),
      end: () => {
        socket.end();
        return closedPromise;
      },
    };
    waiting.push((line) => resolve({ ...client, first: line }));
    socket.on("close", () => reject(new Error(`closed before any reply (from ${localAddress})`)));
  });
}

/** Resolves to true when `promise` settles within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((done) => timer = setTimeout(() => done(false), ms));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens connections until one is greeted (the server may not have counted a close yet); at most `ms`. */
async function connectWhenFree(port: number, localAddress: string, ms = 3000): Promise<Client> {
  const deadline = Date.now() + ms;
  while (true) {
    const client = await connect(port, localAddress);
    if (client.first.startsWith("220") || Date.now() > deadline) return client;
    await client.closed;
    await new Promise((done) => setTimeout(done, 50));
  }
}

async function endAll(clients: Client[]): Promise<void> {
  await Promise.all(clients.map((c) => c.isClosed() ? undefined : c.end()));
}

Deno.test("the defaults allow 1000 connections, 100 per address: 64 concurrent loopback clients are all greeted", async () => {
  const config = testConfig();
  assert.equal(config.smtpMaxConnections, 1000);
  assert.equal(config.smtpMaxConnectionsPerAddress, 100);
  await withInboxes(async ({ smtp }) => {
    const clients = await Promise.all(Array.from({ length: 64 }, () => connect(smtp.port)));
    try {
      assert.deepEqual(clients.filter((c) => !c.first.startsWith("220")).map((c) => c.first), []);
    } finally {
      await endAll(clients);
    }
  });
});

Deno.test("the connection over SMTP_MAX_CONNECTIONS_PER_ADDRESS gets 421 and is closed; other addresses are not affected", async () => {
  await withInboxes(async ({ smtp }) => {
    const held = await Promise.all(Array.from({ length: 3 }, () => connect(smtp.port, "127.0.0.1")));
    const others: Client[] = [];
    try {
      for (const c of held) assert.match(c.first, /^220 /);

      const refused = await connect(smtp.port, "127.0.0.1");
      assert.match(refused.first, /^421 .*Too many connections from your address/);
      assert.ok(await within(refused.closed, 2000), "the server closes the refused connection");

      // Refusals do not take a slot: the address stays at its maximum, no more.
      const again = await connect(smtp.port, "127.0.0.1");
      assert.match(again.first, /^421 /);
      await again.closed;

      // The cap is per address: another client address is greeted and can deliver.
      const other = await connect(smtp.port, "127.0.0.2");
      others.push(other);
      assert.match(other.first, /^220 /);
      assert.match(await other.command("EHLO other.test"), /^250 /);
      assert.match(await other.command(`RCPT TO:<nobody-here@${MAIL_DOMAIN}>`), /^503 /, "a live session");

      // Once one of the three closes, the address may connect again.
      await held.shift()!.end();
      const next = await connectWhenFree(smtp.port, "127.0.0.1");
      held.push(next);
      assert.match(next.first, /^220 /);
      assert.match(await next.command("EHLO next.test"), /^250 /);
      // ...and is back at its maximum.
      const over = await connect(smtp.port, "127.0.0.1");
      assert.match(over.first, /^421 /);
      await over.closed;
    } finally {
      await endAll([...held, ...others]);
    }
  }, { env: { SMTP_MAX_CONNECTIONS_PER_ADDRESS: "3", SMTP_MAX_CONNECTIONS: "50" } });
});

Deno.test("the connection over SMTP_MAX_CONNECTIONS (any addresses) gets 421 and is closed", async () => {
  await withInboxes(async ({ smtp }) => {
    const held: Client[] = [];
    try {
      for (const from of ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
        held.push(await connect(smtp.port, from));
      }
      for (const c of held) assert.match(c.first, /^220 /);

      const refused = await connect(smtp.port, "127.0.0.5");
      assert.match(refused.first, /^421 .*Too many connected clients/);
      assert.ok(await within(refused.closed, 2000), "the server closes the refused connection");

      await held.shift()!.end();
      const next = await connectWhenFree(smtp.port, "127.0.0.5");
      held.push(next);
      assert.match(next.first, /^220 /);
    } finally {
      await endAll(held);
    }
  }, { env: { SMTP_MAX_CONNECTIONS: "4", SMTP_MAX_CONNECTIONS_PER_ADDRESS: "100" } });
});

Deno.test("a connection that has said QUIT no longer counts for its address, even while the client keeps its side open", async () => {
  await withInboxes(async ({ smtp }) => {
    const held = await Promise.all(Array.from({ length: 2 }, () => connect(smtp.port, "127.0.0.1")));
    try {
      for (const c of held) assert.match(c.first, /^220 /);
      // A sender done with its message says QUIT, and closes its side only later (or never).
      assert.match(await held[0]!.command("QUIT"), /^221 /);
      assert.equal(held[0]!.isClosed(), false, "the client has not closed its side");
      const next = await connect(smtp.port, "127.0.0.1");
      held.push(next);
      assert.match(next.first, /^220 /, "the finished connection does not hold a slot");
      const over = await connect(smtp.port, "127.0.0.1");
      assert.match(over.first, /^421 /, "the two live connections are the maximum");
      await over.closed;
    } finally {
      await endAll(held);
    }
  }, { env: { SMTP_MAX_CONNECTIONS_PER_ADDRESS: "2", SMTP_MAX_CONNECTIONS: "50" } });
});
