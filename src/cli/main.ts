#!/usr/bin/env node
console.log("mcplex: skeleton");
