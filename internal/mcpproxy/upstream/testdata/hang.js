// A stdio "MCP server" that reads every request and never answers, and stays alive
// when its stdin closes: the upstream tests' model of a hung server. It writes its
// pid to $PIDFILE so a test can check that it was reaped.
const fs = require("fs");
if (process.env.PIDFILE) fs.writeFileSync(process.env.PIDFILE, String(process.pid));
process.stdin.on("data", () => {});
process.stdin.on("end", () => {});
setInterval(() => {}, 1 << 30);
