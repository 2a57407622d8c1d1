/**
 * The status page's stylesheet and its one script, served from the ops server itself (no build step,
 * nothing fetched elsewhere): the page's Content-Security-Policy allows only same-origin files.
 */
export const STATUS_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5rem 2rem; color: #1b1f24; }
h1 { margin: 0.6rem 0 0.2rem; } h2 { margin-top: 1.6rem; border-bottom: 1px solid #d0d7de; } h4 { margin-bottom: 0.3rem; }
.summary span { margin-right: 1.2rem; }
table { border-collapse: collapse; margin: 0.3rem 0; }
th, td { border: 1px solid #d0d7de; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.mono { font-family: ui-monospace, monospace; font-size: 12px; }
.short { max-width: 14rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.why { max-width: 32rem; }
.bad, tr.bad td { background: #ffebe9; color: #82071e; }
span.bad, p.bad { font-weight: bold; padding: 0 4px; }
.ok { color: #116329; } .good td.status { color: #116329; font-weight: bold; }
.warn { background: #fff8c5; }
.alert h2 { color: #82071e; }
.admin { background: #f6f8fa; border: 1px solid #d0d7de; padding: 0.5rem; margin: 0.5rem 0; }
.admin label { margin-right: 0.8rem; }
#admin-message { margin-left: 1rem; font-weight: bold; }
article.wallet { border-left: 3px solid #d0d7de; padding-left: 0.8rem; margin-bottom: 1.2rem; }
.totals { display: grid; grid-template-columns: repeat(auto-fill, minmax(10.5rem, 1fr)); gap: 0.5rem; margin: 0.6rem 0; }
.figure { border: 1px solid #d0d7de; border-radius: 6px; padding: 0.4rem 0.6rem; background: #f6f8fa; }
.figure .label { display: block; font-size: 12px; color: #57606a; }
.figure .value { display: block; font-size: 1.35rem; font-variant-numeric: tabular-nums; }
.figure .note { display: block; font-size: 12px; color: #57606a; }
#fleet-totals .value { font-size: 1.6rem; }
.money { font-variant-numeric: tabular-nums; }
.up { color: #116329; } .down { color: #82071e; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.market .id { display: block; color: #57606a; font-size: 11px; }
.pct { color: #57606a; font-size: 12px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1rem; }
.charts figure { margin: 0; }
.charts figcaption { font-size: 12px; color: #57606a; }
svg.chart { width: 100%; height: auto; max-height: 14rem; background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
ul.next { padding-left: 1.2rem; margin: 0.3rem 0; } ul.next time { font-family: ui-monospace, monospace; font-size: 12px; color: #57606a; }
.scroll { overflow-x: auto; max-width: 100%; }
@media (max-width: 700px) {
  body { margin: 0 0.6rem 1.5rem; }
  .summary span { display: inline-block; margin-right: 0.6rem; }
  .scroll { overflow-x: auto; }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; box-sizing: border-box; }
  table.cards thead { display: none; }
  table.cards tr { border: 1px solid #d0d7de; border-radius: 6px; margin-bottom: 0.5rem; padding: 0.3rem 0.5rem; }
  table.cards td { border: none; padding: 1px 0; text-align: right; white-space: normal; }
  table.cards td::before { content: attr(data-label); float: left; color: #57606a; font-size: 12px; padding-right: 0.5rem; }
  table.cards td.market { text-align: left; font-weight: bold; }
  table.cards td.market::before { content: none; }
  table.cards td:empty { display: none; }
  .mono.short { max-width: 8rem; }
  /* Every other table scrolls inside its own box: the page itself never scrolls sideways. */
  table:not(.cards) { display: block; overflow-x: auto; max-width: 100%; }
  h3 .mono { word-break: break-all; }
  label { display: inline-block; max-width: 100%; } select, input { max-width: 100%; box-sizing: border-box; }
}
`;

/**
 * Pause, resume and retry: each a POST with the operator token as a bearer token. The token is kept
 * in this tab's sessionStorage only, never in a cookie (so no other site can make the browser send it).
 */
export const STATUS_JS = `
"use strict";
(function () {
  var tokenInput = document.getElementById("admin-token");
  var message = document.getElementById("admin-message");
  if (!tokenInput) return;
  tokenInput.value = sessionStorage.getItem("keeper-admin-token") || "";
  tokenInput.addEventListener("change", function () {
    sessionStorage.setItem("keeper-admin-token", tokenInput.value);
  });
  function say(text) { message.textContent = text; }
  function post(path, body) {
    var token = tokenInput.value.trim();
    if (!token) { say("enter the operator token first"); return; }
    sessionStorage.setItem("keeper-admin-token", token);
    fetch(path, {
      method: "POST",
      headers: { "authorization": "Bearer " + token, "content-type": "application/json" },
      body: JSON.stringify(body || {}),
    }).then(function (response) {
      return response.json().then(function (answer) {
        if (response.ok) { say(answer.detail || "done"); location.reload(); }
        else say((answer && answer.detail) || ("refused: HTTP " + response.status));
      });
    }, function () { say("the keeper did not answer"); });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-action]");
    if (!button) return;
    var action = button.getAttribute("data-action");
    if (action === "pause") {
      var reason = document.getElementById("pause-reason");
      post("/admin/pause", { reason: reason ? reason.value : "" });
    } else if (action === "resume") post("/admin/resume");
    else if (action === "retry") post("/admin/retry/" + encodeURIComponent(button.getAttribute("data-key")));
  });
})();
`;
