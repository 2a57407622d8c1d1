import { describe, expect, it } from "vitest";
import { HostAllowList, isFromAnotherSite, isHostName } from "../../../src/ops/allowed-hosts.js";

describe("HostAllowList", () => {
  const list = new HostAllowList({ boundHost: "0.0.0.0", names: ["keeper", "Ops.Internal."] });

  it.each([
    "localhost",
    "localhost:9464",
    "LOCALHOST.",
    "127.0.0.1:1",
    "[::1]:9464",
    "[::1]",
    "10.0.0.7:9464",
    "[fe80::1]",
    "keeper",
    "keeper:80",
    "ops.internal:9464",
    undefined,
  ])("answers %s", (host) => {
    expect(list.allows(host)).toBe(true);
  });

  it.each([
    "evil.example",
    "evil.example:9464",
    "keeper.evil.example",
    "localhost.evil.example",
    "127.0.0.1.nip.io",
    "0.0.0.0.evil.example",
    "",
    "keeper:port",
    "keeper:80:80",
    "user@localhost",
    "[::1",
    "[keeper]:80",
  ])("refuses %j", (host) => {
    expect(list.allows(host)).toBe(false);
  });

  it("answers the name it is bound to, when that is a name", () => {
    expect(new HostAllowList({ boundHost: "keeper.lan" }).allows("keeper.lan:9464")).toBe(true);
    expect(new HostAllowList({ boundHost: "0.0.0.0" }).allows("keeper.lan:9464")).toBe(false);
  });

  it("refuses to hold a name with a scheme or a port, naming the rule", () => {
    expect(() => new HostAllowList({ names: ["http://keeper"] })).toThrow(/without scheme or port/);
    expect(isHostName("keeper:9464")).toBe(false);
    expect(isHostName("keeper")).toBe(true);
  });
});

describe("isFromAnotherSite", () => {
  const host = "127.0.0.1:8787";
  it.each([
    [{ host }, false],
    [{ host, origin: "http://127.0.0.1:8787" }, false],
    [{ host: "ops.example", origin: "https://ops.example" }, false],
    [{ host, "sec-fetch-site": "same-origin" }, false],
    [{ host, "sec-fetch-site": "none" }, false],
    [{ host, origin: "http://evil.example" }, true],
    [{ host, origin: "http://127.0.0.1:3000" }, true],
    [{ host, origin: "null" }, true],
    [{ host, "sec-fetch-site": "cross-site" }, true],
    [{ host, "sec-fetch-site": "same-site" }, true],
  ] as const)("%j -> %s", (headers, expected) => {
    expect(isFromAnotherSite(headers)).toBe(expected);
  });
});
