// Compiles the JSON Schema in the file argv[3] with ajv (the directory
// holding its node_modules is argv[2]) as draft 2020-12, in strict mode:
// every strict restriction (tuples, types, required, unknown keywords)
// an error. Prints "compiled" or the error, and exits 1 on an error.
const Ajv2020 = require(process.argv[2] + "/node_modules/ajv/dist/2020").default;
const schema = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
try {
  new Ajv2020({strict: true, allErrors: true}).compile(schema);
  console.log("compiled");
} catch (e) {
  console.log(e.message);
  process.exit(1);
}
