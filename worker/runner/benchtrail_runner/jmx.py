"""JMeter test plans generated from a plan: one thread group per load level, named "TG <threads>"
so that the JTL's threadName/grpThreads identify the load, with one HTTP sampler per scenario
(label = scenario name). Written in the JMeter 5 format (also loadable by JMeter 3+)."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from .plan import Load, Scenario, Variant

JTL_PROPERTIES: dict[str, str] = {
    "jmeter.save.saveservice.output_format": "csv",
    "jmeter.save.saveservice.print_field_names": "true",
    "jmeter.save.saveservice.timestamp_format": "ms",
    "jmeter.save.saveservice.url": "true",
    "jmeter.save.saveservice.connect_time": "true",
    "jmeter.save.saveservice.idle_time": "true",
    "jmeter.save.saveservice.latency": "true",
    "jmeter.save.saveservice.thread_counts": "true",
    "jmeter.save.saveservice.sent_bytes": "true",
    "jmeter.save.saveservice.assertion_results_failure_message": "true",
    "sampleresult.timestamp.start": "true",
    # A cumulative "summary =" line every second is the runner's progress feed.
    "summariser.name": "summary",
    "summariser.interval": "1",
    "summariser.out": "true",
}


def thread_group_name(load: Load) -> str:
    return f"TG {load.threads}"


def _prop(parent: ET.Element, kind: str, name: str, value: str | int | bool | None = None) -> ET.Element:
    el = ET.SubElement(parent, kind, name=name)
    if value is not None:
        el.text = str(value).lower() if isinstance(value, bool) else str(value)
    return el


def _sampler(tree: ET.Element, variant: Variant, scenario: Scenario) -> None:
    s = ET.SubElement(tree, "HTTPSamplerProxy", guiclass="HttpTestSampleGui", testclass="HTTPSamplerProxy",
                      testname=scenario.name, enabled="true")
    args = ET.SubElement(s, "elementProp", name="HTTPsampler.Arguments", elementType="Arguments",
                         guiclass="HTTPArgumentsPanel", testclass="Arguments", enabled="true")
    coll = _prop(args, "collectionProp", "Arguments.arguments")
    if scenario.body is not None:
        _prop(s, "boolProp", "HTTPSampler.postBodyRaw", True)
        arg = ET.SubElement(coll, "elementProp", name="", elementType="HTTPArgument")
        _prop(arg, "boolProp", "HTTPArgument.always_encode", False)
        _prop(arg, "stringProp", "Argument.value", scenario.body)
        _prop(arg, "stringProp", "Argument.metadata", "=")
    _prop(s, "stringProp", "HTTPSampler.domain", variant.host)
    _prop(s, "stringProp", "HTTPSampler.port", variant.port)
    _prop(s, "stringProp", "HTTPSampler.protocol", variant.scheme)
    _prop(s, "stringProp", "HTTPSampler.path", variant.base_path + (scenario.path or "/"))
    _prop(s, "stringProp", "HTTPSampler.method", scenario.method)
    _prop(s, "boolProp", "HTTPSampler.follow_redirects", True)
    _prop(s, "boolProp", "HTTPSampler.use_keepalive", True)
    _prop(s, "stringProp", "HTTPSampler.implementation", "HttpClient4")
    _prop(s, "stringProp", "HTTPSampler.connect_timeout", 5000)
    _prop(s, "stringProp", "HTTPSampler.response_timeout", 30000)
    children = ET.SubElement(tree, "hashTree")
    if scenario.headers:
        hm = ET.SubElement(children, "HeaderManager", guiclass="HeaderPanel", testclass="HeaderManager",
                           testname="headers", enabled="true")
        hc = _prop(hm, "collectionProp", "HeaderManager.headers")
        for key, value in scenario.headers.items():
            h = ET.SubElement(hc, "elementProp", name=key, elementType="Header")
            _prop(h, "stringProp", "Header.name", key)
            _prop(h, "stringProp", "Header.value", value)
        ET.SubElement(children, "hashTree")


def _thread_group(tree: ET.Element, load: Load, variant: Variant, scenarios: Sequence[Scenario]) -> None:
    assert load.threads is not None
    tg = ET.SubElement(tree, "ThreadGroup", guiclass="ThreadGroupGui", testclass="ThreadGroup",
                       testname=thread_group_name(load), enabled="true")
    _prop(tg, "stringProp", "ThreadGroup.on_sample_error", "continue")
    ctrl = ET.SubElement(tg, "elementProp", name="ThreadGroup.main_controller", elementType="LoopController",
                         guiclass="LoopControlPanel", testclass="LoopController", enabled="true")
    _prop(ctrl, "boolProp", "LoopController.continue_forever", False)
    _prop(ctrl, "stringProp", "LoopController.loops", load.loops if load.loops is not None else -1)
    _prop(tg, "stringProp", "ThreadGroup.num_threads", load.threads)
    # All threads start at once: a ramp would put an unloaded stretch inside the measured window.
    _prop(tg, "stringProp", "ThreadGroup.ramp_time", 0)
    _prop(tg, "boolProp", "ThreadGroup.scheduler", load.duration_s is not None)
    _prop(tg, "stringProp", "ThreadGroup.duration", "" if load.duration_s is None else max(1, round(load.duration_s)))
    _prop(tg, "stringProp", "ThreadGroup.delay", "")
    _prop(tg, "boolProp", "ThreadGroup.same_user_on_next_iteration", True)
    body = ET.SubElement(tree, "hashTree")
    if load.rate is not None:
        # Shared by the group's threads; JMeter counts samples per minute across all samplers.
        timer = ET.SubElement(body, "ConstantThroughputTimer", guiclass="TestBeanGUI",
                              testclass="ConstantThroughputTimer", testname="rate", enabled="true")
        _prop(timer, "intProp", "calcMode", 4)
        _prop(timer, "stringProp", "throughput", repr(float(load.rate) * 60.0 * len(scenarios)))
        ET.SubElement(body, "hashTree")
    for scenario in scenarios:
        _sampler(body, variant, scenario)


def build_jmx(variant: Variant, scenarios: Sequence[Scenario], loads: Sequence[Load],
              *, serialize: bool = True) -> str:
    """A JMX for one variant. With several loads, `serialize` runs the thread groups one after
    another (a load ladder in one JMeter process); otherwise they run at the same time."""
    root = ET.Element("jmeterTestPlan", version="1.2", properties="5.0", jmeter="5.6.3")
    top = ET.SubElement(root, "hashTree")
    tp = ET.SubElement(top, "TestPlan", guiclass="TestPlanGui", testclass="TestPlan",
                       testname=f"benchtrail {variant.name}", enabled="true")
    _prop(tp, "boolProp", "TestPlan.functional_mode", False)
    _prop(tp, "boolProp", "TestPlan.serialize_threadgroups", serialize)
    udv = ET.SubElement(tp, "elementProp", name="TestPlan.user_defined_variables", elementType="Arguments",
                        guiclass="ArgumentsPanel", testclass="Arguments", enabled="true")
    _prop(udv, "collectionProp", "Arguments.arguments")
    plan_tree = ET.SubElement(top, "hashTree")
    for load in loads:
        _thread_group(plan_tree, load, variant, scenarios)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
