/**
 * The browsable API docs at /v1/docs: one self-contained page (inline CSS and JS, no CDN, no
 * external URL of any kind) that reads /v1/openapi.json from this same server and renders it,
 * so it works on a LAN with no internet access.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Textwire API v1</title>
<style>
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:16px 24px}
header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c7ccd6;font-size:13px}
main{max-width:1100px;margin:0 auto;padding:16px 24px 64px}
#filter{width:100%;padding:8px 10px;font-size:15px;border:1px solid #c9ced8;border-radius:6px;margin:8px 0 16px}
h2.tag{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde1e8;padding-bottom:4px}
details.op{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:6px 0}
details.op>summary{cursor:pointer;padding:8px 12px;display:flex;gap:10px;align-items:center;list-style:none}
details.op>summary::-webkit-details-marker{display:none}
.m{font:600 12px/1 ui-monospace,Menlo,Consolas,monospace;padding:5px 8px;border-radius:4px;color:#fff;min-width:62px;text-align:center}
.GET{background:#2f7d4f}.POST{background:#2457a6}.PUT{background:#9a6a00}.DELETE{background:#b3261e}.PATCH{background:#6b4aa6}
.path{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:14px}
.sum{color:#555d6b;margin-left:auto;text-align:right}
.body{padding:4px 16px 14px;border-top:1px solid #eef0f4}
.body h4{margin:14px 0 6px;font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#555d6b}
table{border-collapse:collapse;width:100%;font-size:13.5px}
td,th{border:1px solid #e3e6ec;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f6}
code,.schema{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.schema{background:#f6f7f9;border:1px solid #e3e6ec;border-radius:4px;padding:8px 10px;white-space:pre-wrap;overflow:auto;margin:4px 0}
.badge{font-size:11px;padding:2px 6px;border-radius:10px;background:#eef0f4;color:#555d6b}
.admin{background:#fde8e7;color:#8c1d18}
.st{font-weight:600}
.err{color:#b3261e}
#intro table{max-width:760px}
</style>
</head>
<body>
<header><h1>Textwire API v1</h1><p id="sub">Loading the OpenAPI document…</p></header>
<main>
<input id="filter" type="search" placeholder="Filter endpoints (path, summary, tag)…" autocomplete="off">
<div id="intro"></div>
<div id="ops"></div>
</main>
<script>
(function () {
  "use strict";
  var specUrl = location.pathname.replace(/\\/docs\\/?.*$/, "/openapi.json");
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) { if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]); }
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function resolve(spec, s) {
    var seen = 0;
    while (s && s.$ref && seen++ < 10) {
      var parts = s.$ref.replace(/^#\\//, "").split("/");
      s = parts.reduce(function (o, p) { return o && o[p]; }, spec);
    }
    return s || {};
  }
  function typeOf(spec, s) {
    s = resolve(spec, s);
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return s.enum.map(function (v) { return JSON.stringify(v); }).join(" | ");
    if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map(function (x) { return typeOf(spec, x); }).join(" | ");
    if (s.type === "array") return typeOf(spec, s.items || {}) + "[]";
    var t = Array.isArray(s.type) ? s.type.join(" | ") : (s.type || "any");
    if (s.format) t += " (" + s.format + ")";
    return t;
  }
  function constraints(s) {
    var out = [];
    ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "default"].forEach(function (k) {
      if (s[k] !== undefined) out.push(k + ": " + JSON.stringify(s[k]));
    });
    return out.join(", ");
  }
  function schemaText(spec, s, indent, depth) {
    s = resolve(spec, s);
    indent = indent || "";
    if (depth > 6) return indent + "…";
    var lines = [];
    var props = s.properties || (s.type === "array" && s.items && resolve(spec, s.items).properties);
    if (s.type === "array" && props) { lines.push(indent + "array of {"); s = resolve(spec, s.items); }
    else if (props) lines.push(indent + "{");
    else return indent + typeOf(spec, s) + (s.description ? "   // " + s.description : "");
    var req = s.required || [];
    Object.keys(s.properties).forEach(function (name) {
      var p = resolve(spec, s.properties[name]);
      var inner = p.properties || (p.type === "array" && p.items && resolve(spec, p.items).properties);
      var head = indent + "  " + name + (req.indexOf(name) >= 0 ? "" : "?") + ": ";
      if (inner) lines.push(head + schemaText(spec, p, indent + "  ", (depth || 0) + 1).trimStart());
      else {
        var c = constraints(p);
        lines.push(head + typeOf(spec, p) + (c ? "  [" + c + "]" : "") + (p.description ? "   // " + p.description : ""));
      }
    });
    lines.push(indent + "}");
    return lines.join("\\n");
  }
  function render(spec) {
    document.getElementById("sub").textContent = spec.info.title + " " + spec.info.version + " · OpenAPI " + spec.openapi + " · " + specUrl;
    var intro = document.getElementById("intro");
    var codes = spec["x-error-codes"] || {};
    var rows = Object.keys(codes).map(function (c) { return el("tr", null, [el("td", null, [el("code", { text: c })]), el("td", { text: String(codes[c]) })]); });
    intro.appendChild(el("details", null, [el("summary", { text: "Authentication and error codes" }),
      el("p", { text: "Send Authorization: Bearer <API key>. Messages routes also take the key as the first path segment. The form webhook needs no key. Every error uses the ErrorEnvelope below." }),
      el("div", { class: "schema", text: schemaText(spec, spec.components.schemas.ErrorEnvelope, "", 0) }),
      el("table", null, [el("tr", null, [el("th", { text: "code" }), el("th", { text: "HTTP status" })])].concat(rows))]));
    var byTag = {};
    Object.keys(spec.paths).forEach(function (path) {
      Object.keys(spec.paths[path]).forEach(function (method) {
        var op = spec.paths[path][method];
        var tag = (op.tags && op.tags[0]) || "Other";
        (byTag[tag] = byTag[tag] || []).push({ path: path, method: method.toUpperCase(), op: op });
      });
    });
    var root = document.getElementById("ops");
    Object.keys(byTag).sort().forEach(function (tag) {
      var section = el("section", { "data-tag": tag.toLowerCase() }, [el("h2", { class: "tag", text: tag })]);
      byTag[tag].forEach(function (x) { section.appendChild(renderOp(spec, x)); });
      root.appendChild(section);
    });
  }
  function renderOp(spec, x) {
    var op = x.op;
    var body = el("div", { class: "body" });
    if (op.description) body.appendChild(el("p", { text: op.description.replace(/\\*\\*/g, "") }));
    var perm = op["x-required-permission"];
    body.appendChild(el("p", null, [el("span", { class: "badge" + (perm === "admin_access" ? " admin" : ""), text: perm === "none" ? "no API key" : "key: " + perm })]));
    if (op.parameters && op.parameters.length) {
      body.appendChild(el("h4", { text: "Parameters" }));
      var t = el("table", null, [el("tr", null, ["name", "in", "type", "required", "notes"].map(function (h) { return el("th", { text: h }); }))]);
      op.parameters.forEach(function (p) {
        var s = p.schema || {};
        t.appendChild(el("tr", null, [el("td", null, [el("code", { text: p.name })]), el("td", { text: p.in }), el("td", { text: typeOf(spec, s) }),
          el("td", { text: p.required ? "yes" : "no" }), el("td", { text: [p.description || s.description, constraints(s)].filter(Boolean).join(" · ") })]));
      });
      body.appendChild(t);
    }
    if (op.requestBody) {
      Object.keys(op.requestBody.content).forEach(function (ct) {
        body.appendChild(el("h4", { text: "Request body (" + ct + ")" }));
        body.appendChild(el("div", { class: "schema", text: schemaText(spec, op.requestBody.content[ct].schema, "", 0) }));
      });
    }
    body.appendChild(el("h4", { text: "Responses" }));
    Object.keys(op.responses).sort().forEach(function (st) {
      var r = op.responses[st];
      var isErr = Number(st) >= 400;
      body.appendChild(el("p", null, [el("span", { class: "st" + (isErr ? " err" : ""), text: st }), " " + (r.description || "")]));
      var c = r.content && (r.content["application/json"] || r.content[Object.keys(r.content)[0]]);
      if (c && c.schema && !isErr) body.appendChild(el("div", { class: "schema", text: schemaText(spec, c.schema, "", 0) }));
    });
    var d = el("details", { class: "op", "data-search": (x.method + " " + x.path + " " + (op.summary || "") + " " + (op.tags || []).join(" ")).toLowerCase() }, [
      el("summary", null, [el("span", { class: "m " + x.method, text: x.method }), el("span", { class: "path", text: x.path }), el("span", { class: "sum", text: op.summary || "" })]),
      body]);
    return d;
  }
  document.getElementById("filter").addEventListener("input", function (e) {
    var q = e.target.value.toLowerCase().trim();
    document.querySelectorAll("details.op").forEach(function (d) { d.style.display = !q || d.getAttribute("data-search").indexOf(q) >= 0 ? "" : "none"; });
    document.querySelectorAll("section[data-tag]").forEach(function (s) {
      var any = Array.prototype.some.call(s.querySelectorAll("details.op"), function (d) { return d.style.display !== "none"; });
      s.style.display = any ? "" : "none";
    });
  });
  fetch(specUrl, { headers: { Accept: "application/json" } })
    .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then(render)
    .catch(function (e) { document.getElementById("sub").textContent = "Could not load " + specUrl + ": " + e.message; });
})();
</script>
</body>
</html>
`;
