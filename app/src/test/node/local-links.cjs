// A markdownlint rule: a link or image to a file of the repository (a relative path, with or
// without a #fragment) must name a file or directory that exists, relative to the page. URLs
// (http:, https:, mailto: …) and in-page fragments (#…, checked by MD051) are left alone.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

module.exports = {
  names: ["local-links"],
  description: "Links to repository files lead to a file that exists",
  tags: ["links"],
  parser: "micromark",
  function: (params, onError) => {
    const dir = path.dirname(path.resolve(params.name));
    const tokens = params.parsers.micromark.tokens;
    const stack = [...tokens];
    while (stack.length) {
      const token = stack.pop();
      stack.push(...token.children);
      if (token.type !== "resourceDestinationString") {
        continue;
      }
      const target = token.text.trim();
      if (target === "" || target.startsWith("#") || /^[a-z][a-z0-9+.-]*:/i.test(target)) {
        continue;
      }
      const file = decodeURIComponent(target.split("#")[0].split("?")[0]);
      if (!fs.existsSync(path.resolve(dir, file))) {
        onError({
          lineNumber: token.startLine,
          detail: `'${target}' is not a file of the repository (from ${path.relative(process.cwd(), dir) || "."})`,
          context: token.text,
        });
      }
    }
  },
};
