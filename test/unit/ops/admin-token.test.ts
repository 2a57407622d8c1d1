import { describe, expect, it } from "vitest";
import { carriesAdminToken, isCrossSiteWrite } from "../../../src/ops/admin-token.js";
import { escapeHtml, html } from "../../../src/ops/html.js";

const TOKEN = "token-0123456789abcdef";
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("carriesAdminToken", () => {
  it.each([
    [`Bearer ${TOKEN}`, false, true],
    [`bearer   ${TOKEN}`, false, true],
    [`Bearer ${TOKEN}x`, false, false],
    [`Bearer ${TOKEN.slice(0, -1)}`, false, false],
    ["Bearer", false, false],
    [TOKEN, false, false],
    [basic("operator", TOKEN), false, false],
    [basic("operator", TOKEN), true, true],
    [basic("", TOKEN), true, true],
    [basic(TOKEN, "x"), true, false],
    [`Basic ${TOKEN}`, true, false],
    [undefined, true, false],
  ])("%s (Basic allowed: %s) -> %s", (header, allowBasic, expected) => {
    expect(carriesAdminToken(header, TOKEN, { allowBasic })).toBe(expected);
  });
});

describe("isCrossSiteWrite", () => {
  it.each([
    ["GET", { origin: "http://evil.example", host: "127.0.0.1:9464" }, false],
    ["PUT", { host: "127.0.0.1:9464" }, false],
    ["PUT", { origin: "http://127.0.0.1:9464", host: "127.0.0.1:9464" }, false],
    ["PUT", { origin: "http://evil.example", host: "127.0.0.1:9464" }, true],
    ["POST", { origin: "null", host: "127.0.0.1:9464" }, true],
    ["POST", { "sec-fetch-site": "same-site", host: "127.0.0.1:9464" }, true],
    ["DELETE", { "sec-fetch-site": "same-origin", host: "127.0.0.1:9464" }, false],
  ])("%s %j -> %s", (method, headers, expected) => {
    expect(isCrossSiteWrite(method, headers)).toBe(expected);
  });
});

describe("html", () => {
  it("escapes every interpolated value, nested templates stay markup", () => {
    const title = `<script>alert('x')</script> & "quoted"`;
    expect(html`<td title="${title}">${title}</td>`.text).toBe(
      '<td title="&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;</td>',
    );
    expect(html`<tr>${["<a>", html`<b>${"<c>"}</b>`]}</tr>`.text).toBe("<tr>&lt;a&gt;<b>&lt;c&gt;</b></tr>");
    expect(html`${undefined}${null}${false}${0}`.text).toBe("0");
    expect(escapeHtml("a&b")).toBe("a&amp;b");
  });
});
