package com.example.ribbon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weighted.jni.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Runs the example as README.md describes it (the main's two rounds, against real loopback
 * backends) and checks what the README says they show. Plain JUnit: the example declares only
 * what it needs.
 */
class RibbonExampleTest {
  @Test
  void everyCallIsCountedAndTrafficLeavesAFailingBackend() throws Exception {
    try (ToyBackends backends = ToyBackends.start(3)) {
      RibbonExample demo = new RibbonExample(backends.listOfServers());
      assertEquals("demo", demo.rule().getService().name());

      Map<String, Integer> healthy = demo.round(300);
      assertTrue(healthy.keySet().stream().allMatch(a -> a.matches("backend [012] \\(ok\\)")),
          healthy.toString());
      assertEquals(300, total(demo, "success"), "every call reached the engine: " + healthy);

      // The busiest backend: the one the picker liked best until now, so it does get calls
      // after it starts failing, until its failures price it out.
      int sick = RibbonExample.busiest(healthy);
      backends.setFailing(sick, true);
      Map<String, Integer> after = demo.round(300);
      int fails = after.getOrDefault("backend " + sick + " (fail)", 0);
      // Twenty runs of main here gave it 1-5 of the 300 calls; a third of them would be 100.
      assertTrue(fails >= 1 && fails <= 30, after.toString());
      assertEquals(fails, total(demo, "http_5xx"), after.toString());
      assertEquals(600 - fails, total(demo, "success"), after.toString());
    }
  }

  @Test
  void theReadmeListsExactlyTheArtifactsAndVersionsThePomDeclares() throws Exception {
    Path dir = Path.of(System.getProperty("basedir", "."));
    Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(dir.resolve("pom.xml").toFile());
    Map<String, String> properties = new TreeMap<>();
    NodeList props = ((Element) pom.getElementsByTagName("properties").item(0)).getChildNodes();
    for (int i = 0; i < props.getLength(); i++) {
      if (props.item(i) instanceof Element p) {
        properties.put(p.getTagName(), p.getTextContent().trim());
      }
    }
    Map<String, String> declared = new TreeMap<>();
    NodeList deps = pom.getElementsByTagName("dependency");
    for (int i = 0; i < deps.getLength(); i++) {
      Element d = (Element) deps.item(i);
      NodeList scope = d.getElementsByTagName("scope");
      if (scope.getLength() == 0 || !scope.item(0).getTextContent().equals("test")) {
        String version = text(d, "version");
        Matcher p = Pattern.compile("\\$\\{(.+)}").matcher(version);
        declared.put(text(d, "groupId") + ":" + text(d, "artifactId"),
            p.matches() ? properties.get(p.group(1)) : version);
      }
    }
    // The README's table rows: | `group:artifact` | version | why |
    Map<String, String> listed = new TreeMap<>();
    Matcher m = Pattern.compile("(?m)^\\| `([\\w.-]+:[\\w.-]+)` \\| ([^ |]+) \\|")
        .matcher(Files.readString(dir.resolve("README.md")));
    while (m.find()) {
      listed.put(m.group(1), m.group(2));
    }
    assertEquals(declared, listed);
    assertEquals(5, listed.size(), listed.toString());
  }

  private static String text(Element e, String tag) {
    return e.getElementsByTagName(tag).item(0).getTextContent().trim();
  }

  static long total(RibbonExample demo, String outcome) {
    long n = 0;
    for (Object s : (List<?>) Json.parseObject(demo.rule().getEngine().snapshotJson())
        .get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        n += ((Number) ((Map<?, ?>) ((Map<?, ?>) e).get("totals")).get(outcome)).longValue();
      }
    }
    return n;
  }
}
