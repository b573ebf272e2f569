import { describe, expect, test } from "bun:test";
import { runActions, stepRuns, takesNext, type ActionEnv } from "./scenario-action-run.ts";
import { parseCommandLine } from "./options.ts";
import { posixRegExp, type Action } from "./scenario-actions.ts";
import { renderLine, renderTemplate } from "./scenario-template.ts";
import { CallVars } from "./scenario-vars.ts";
import { parseScenario } from "./scenario-xml.ts";
import { parseSipWire } from "./sip-wire.ts";

const wrap = (body: string) =>
  `<?xml version="1.0"?><scenario name="t"><send><![CDATA[INVITE sip:a SIP/2.0]]></send>${body}</scenario>`;
const OK_200 = parseSipWire(
  "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 1.1.1.1;branch=z9hG4bK1\r\nFrom: <sip:a@x>;tag=f1\r\nTo: <sip:b@y>;tag=peer42\r\nContact: <sip:b@10.0.0.7:5062;transport=UDP>\r\nRecord-Route: <sip:p1;lr>\r\nRecord-Route: <sip:p2;lr>\r\nCSeq: 1 INVITE\r\nContent-Length: 37\r\n\r\nv=0\r\no=user1 53655765 2353687637 IN IP4\r\n",
)!;

/** Parses one recv's actions out of a scenario, so the tests go through the XML reader. */
function actionsOf(xml: string): Action[] {
  const s = parseScenario(wrap(`<recv response="200"><action>${xml}</action></recv>`), "t.xml");
  return s.commands[1]!.step!.actions!;
}

function run(xml: string, vars = new CallVars(), msg = OK_200) {
  const logs: string[] = [];
  const env: ActionEnv = {
    vars,
    msg,
    render: (t) => renderLine(t, { values: { call_id: "c1" }, last: msg, fields: [], authentication: () => "", vars }),
    log: (l) => logs.push(l),
  };
  return { outcome: runActions(actionsOf(xml), env), vars, logs };
}

describe("ereg", () => {
  test("assign_to: the first variable takes the whole match, the rest the groups; POSIX classes work", () => {
    const { outcome, vars } = run(
      `<ereg regexp="o=([[:alnum:]]*) ([[:alnum:]]*) ([[:alnum:]]*)" search_in="msg" check_it="true" assign_to="3,4,5,8"/>`,
    );
    expect(outcome).toEqual({ ok: true });
    expect(["3", "4", "5", "8"].map((v) => vars.text(v))).toEqual([
      "o=user1 53655765 2353687637",
      "user1",
      "53655765",
      "2353687637",
    ]);
  });

  test.each([
    [`search_in="hdr" header="To:" regexp=";tag=(.*)"`, "peer42"],
    [`search_in="hdr" header="contact: " case_indep="true" regexp="@([0-9.]+):"`, "10.0.0.7"],
    [`search_in="hdr" header="Record-Route:" occurrence="2" regexp="sip:(p[0-9])"`, "p2"],
    [`search_in="hdr" header="Record-Route:" regexp="sip:(p[0-9])"`, "p1"],
    [`search_in="body" regexp="IN (IP[46])"`, "IP4"],
  ])("%s", (attrs, group) => {
    expect(run(`<ereg ${attrs} assign_to="all,g"/>`).vars.text("g")).toBe(group);
  });

  test("hdr searches the value with sipp's leading space", () => {
    expect(run(`<ereg search_in="hdr" header="To:" regexp=".*" assign_to="to"/>`).vars.text("to")).toBe(
      " <sip:b@y>;tag=peer42",
    );
  });

  test("search_in var reads another variable", () => {
    expect(
      run(
        `<assignstr assign_to="s" value="abc12"/><ereg search_in="var" variable="s" regexp="c([0-9]+)" assign_to="m,d"/>`,
      ).vars.text("d"),
    ).toBe("12");
  });

  test("check_it fails the call when nothing matches and unsets the variables; check_it_inverse when something does", () => {
    const vars = new CallVars();
    vars.set("t", { kind: "string", s: "old" });
    const miss = run(`<ereg regexp="nowhere-(x)" check_it="true" assign_to="all,t"/>`, vars);
    expect(miss.outcome).toEqual({ ok: false, reason: "regexp no match (assign_to all,t)" });
    expect(miss.vars.get("t")).toBeUndefined();
    expect(run(`<ereg regexp="peer42" check_it_inverse="true" assign_to="x"/>`).outcome.ok).toBe(false);
    expect(run(`<ereg regexp="nowhere" assign_to="x"/>`).outcome).toEqual({ ok: true });
  });
});

describe("variable actions", () => {
  test("assign, arithmetic, test, strcmp, todouble, assignstr and their sipp renderings", () => {
    const { vars, logs } = run(
      `<assign assign_to="x" value="3"/><add assign_to="x" value="1.5"/><divide assign_to="x" value="2"/><multiply assign_to="x" value="4"/><subtract assign_to="x" value="1"/>` +
        `<test assign_to="big" variable="x" compare="greater_than_equal" value="8"/><test assign_to="small" variable="x" compare="less_than" value="8"/>` +
        `<assignstr assign_to="s" value="id-[call_id]-[$x]"/><strcmp assign_to="c" variable="s" value="id-c2"/>` +
        `<assignstr assign_to="n" value=" 42 "/><todouble assign_to="d" variable="n"/><todouble assign_to="bad" variable="s"/>` +
        `<log message="x=[$x] big=[$big] small=[$small] s=[$s] c=[$c] d=[$d] bad=[$bad]"/><warning message="w [$d]"/>`,
    );
    expect(logs).toEqual([
      "x=8.000000 big=true small=false s=id-c1-8.000000 c=-1.000000 d=42.000000 bad=",
      "Warning: w 42.000000",
    ]);
    expect(vars.truthy("big")).toBe(true);
  });

  test("test against variable2, assign from a variable", () => {
    const { vars } = run(
      `<assign assign_to="a" value="2"/><assign assign_to="b" variable="a"/><test assign_to="eq" variable="a" compare="equal" variable2="b"/>`,
    );
    expect(vars.text("eq")).toBe("true");
  });

  test("error fails the call with its message; jump and exec end the block", () => {
    expect(run(`<error message="bad [$x]"/><assign assign_to="x" value="1"/>`).outcome).toEqual({
      ok: false,
      reason: "error: bad ",
    });
    expect(run(`<jump value="4"/><log message="never"/>`).outcome).toEqual({ ok: true, jump: 4 });
    const stop = run(`<exec int_cmd="stop_gracefully"/><log message="never"/>`);
    expect(stop.outcome).toEqual({ ok: true, stop: "stop_gracefully" });
    expect(stop.logs).toEqual([]);
  });
});

describe("step attributes", () => {
  test("test, chance and condexec", () => {
    const vars = new CallVars();
    vars.set("yes", { kind: "bool", b: true });
    vars.set("zero", { kind: "number", n: 0 });
    expect(takesNext({ test: "yes" }, vars)).toBe(true);
    expect(takesNext({ test: "zero" }, vars)).toBe(false);
    expect(takesNext({ test: "unset" }, vars)).toBe(false);
    expect(takesNext({ chance: 0.3 }, vars, () => 0.29)).toBe(true);
    expect(takesNext({ chance: 0.3 }, vars, () => 0.31)).toBe(false);
    expect(takesNext({ test: "zero", chance: 1 }, vars, () => 0)).toBe(false);
    expect(stepRuns({ condexec: "yes" }, vars)).toBe(true);
    expect(stepRuns({ condexec: "yes", condexecInverse: true }, vars)).toBe(false);
    expect(stepRuns({ condexec: "unset" }, vars)).toBe(false);
  });

  test("parsed from the XML with Reference and rrs accepted", () => {
    const s = parseScenario(
      wrap(
        `<Reference variables="a"/><recv response="200" rrs="true"><action><ereg regexp="x" assign_to="a"/></action></recv><nop test="a" chance="0.5" next="l" condexec="a" condexec_inverse="true" counter="c1"/><label id="l"/>`,
      ),
      "t.xml",
    );
    expect(s.commands[1]!.step?.rrs).toBe(true);
    expect(s.commands[2]!.step).toEqual({
      test: "a",
      chance: 0.5,
      condexec: "a",
      condexecInverse: true,
      counter: "c1",
    });
  });
});

describe("variables in templates", () => {
  test("[$var] renders the value, an unset one renders empty", () => {
    const vars = new CallVars();
    vars.set("1", { kind: "string", s: "peer42" });
    const text = renderTemplate("BYE sip:a SIP/2.0\nTo: <sip:b>;tag=[$1]\nX-Empty: [$2]", {
      values: {},
      last: undefined,
      fields: [],
      authentication: () => "",
      vars,
    });
    expect(text).toBe("BYE sip:a SIP/2.0\r\nTo: <sip:b>;tag=peer42\r\nX-Empty: \r\n\r\n");
  });
});

describe("refused at load time", () => {
  test.each([
    [`<send>[$never]</send>`, /variable \$never is used but never assigned/],
    [`<nop test="ghost" next="l"/><label id="l"/>`, /variable \$ghost is used but never assigned/],
    [`<nop><action><log message="[$ghost]"/></action></nop>`, /variable \$ghost is used but never assigned/],
    [
      `<nop><action><exec command="rm -rf /"/></action></nop>`,
      /<exec command="…"> is refused: loadgen runs no shell commands/,
    ],
    [`<nop><action><exec int_cmd="reboot"/></action></nop>`, /stop_call, stop_now or stop_gracefully/],
    [`<nop><action><ereg regexp="(a)" assign_to="x,y,z"/></action></nop>`, /names 3 variables but "\(a\)" has 1 group/],
    [`<nop><action><ereg regexp="a" search_in="hdr" assign_to="x"/></action></nop>`, /<ereg> needs header/],
    [
      `<nop><action><ereg regexp="a" assign_to="x" flavour="y"/></action></nop>`,
      /attribute flavour of <ereg> is not built yet/,
    ],
    [
      `<nop><action><test assign_to="b" variable="b" compare="about" value="1"/></action></nop>`,
      /compare="about"> must be one of/,
    ],
    [`<nop><action><setdest host="h" port="1" protocol="udp"/></action></nop>`, /action <setdest> is not built yet/],
    [`<nop chance="2" next="l"/><label id="l"/>`, /between 0 and 1/],
    [`<nop condexec_inverse="true"/>`, /condexec_inverse without condexec/],
    [`<nop><action/><action/></nop>`, /more than one <action>/],
    [`<nop><foo/></nop>`, /<foo> inside <nop> is not built yet/],
  ])("%s", (body, message) => {
    expect(() => parseScenario(wrap(body), "t.xml")).toThrow(message);
  });

  test("a regexp POSIX class loadgen does not know is refused by name", () => {
    expect(() => posixRegExp("[[:graph:]]", "t.xml")).toThrow(/\[:graph:\] is not built yet/);
  });
});

describe("log flags", () => {
  test("sipp's -trace_logs and -log_file are accepted", () => {
    expect(parseCommandLine(["-trace_logs", "-log_file", "actions.log"]).values).toEqual({
      trace_logs: true,
      log_file: "actions.log",
    });
  });
});
