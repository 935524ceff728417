// Reads a JSON list of cases on stdin and writes, on stdout, a JSON list of
// @cloud-copilot/iam-simulate's decision for each, in order:
//   {"decision": "Allowed"|"ExplicitlyDenied"|"ImplicitlyDenied"} or
//   {"error": "..."} when the simulator refuses the case (a policy it does
//   not accept, an action it does not know, a resource of the wrong type).
// A case is {"identityPolicies": [doc...], "boundary": doc|null,
// "resourcePolicy": doc|null, "principal": ARN or service principal, "action",
// "resource", "resourceAccount", "context": {key: string|[string]}}.
import { runSimulation } from '@cloud-copilot/iam-simulate'

const chunks = []
for await (const c of process.stdin) chunks.push(c)
const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'))

const out = []
for (const c of cases) {
  const simulation = {
    identityPolicies: (c.identityPolicies || []).map((policy, i) => ({ name: `policy${i}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: c.resourcePolicy || undefined,
    permissionBoundaryPolicies: c.boundary ? [{ name: 'boundary', policy: c.boundary }] : undefined,
    request: {
      action: c.action,
      principal: c.principal,
      resource: { resource: c.resource, accountId: c.resourceAccount },
      contextVariables: c.context || {}
    }
  }
  try {
    const r = await runSimulation(simulation, {})
    if (r.resultType === 'error') {
      out.push({ error: JSON.stringify(r.errors) })
    } else {
      out.push({ decision: r.overallResult })
    }
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) })
  }
}
process.stdout.write(JSON.stringify(out))
