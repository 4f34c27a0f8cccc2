package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Outcome;
import io.weighted.jni.Pick;
import io.weighted.jni.Service;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Gauges come from the engine's snapshot and follow endpoint-set changes. */
class WeightedMeterBinderTests {

  @Test
  void gaugesFollowTheSnapshot() {
    // A flat error rule, so that an endpoint failing every request is cut (failing), not isolated.
    try (Engine engine = Engine.create("{\"seed\": 1, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}, "
            + "\"rules\": [{\"metric\": \"error_rate\", \"threshold\": 0.01, \"penalty\": 0.5}]}",
            ClockMode.MANUAL);
        WeightedMeterBinder binder = new WeightedMeterBinder(engine, true, 0)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Service svc = engine.service("orders");
      svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {2, 1});
      binder.bindTo(registry);
      assertThat(registry.get("weighted.endpoint.base.weight").tag("endpoint", "a:1").gauge()
          .value()).isEqualTo(2.0);
      assertThat(registry.get("weighted.endpoint.state").tag("endpoint", "b:1").gauge().value())
          .isEqualTo(0.0);  // healthy

      long b = svc.endpointKey("b:1");
      for (int i = 0; i < 100; i++) {
        Pick p = svc.pick();
        svc.complete(p, 1.0, p.key() == b ? Outcome.HTTP_5XX : Outcome.SUCCESS);
      }
      engine.advance(Duration.ofSeconds(5));
      binder.refresh(true);
      assertThat(registry.get("weighted.endpoint.penalty").tag("endpoint", "b:1").gauge().value())
          .isEqualTo(0.5);
      assertThat(registry.get("weighted.endpoint.state").tag("endpoint", "b:1").gauge().value())
          .isEqualTo(4.0);  // failing
      assertThat(registry.get("weighted.endpoint.weight").tag("endpoint", "b:1").gauge().value())
          .isEqualTo(0.5);

      svc.setEndpoints(new String[] {"a:1"}, new double[] {2});
      binder.refresh(true);
      assertThat(registry.find("weighted.endpoint.weight").tag("endpoint", "b:1").gauge()).isNull();
      assertThat(registry.get("weighted.endpoints").gauge().value()).isEqualTo(1.0);
      assertThat(registry.get("weighted.service.panic").tag("service", "orders").gauge().value())
          .isEqualTo(0.0);
    }
  }

  @Test
  void shareGaugeIsTheTrafficTheEndpointGotNotItsWeight() {
    // Load-aware picking: b fails every call, so the cost comparison sends it little traffic
    // although its weight stays at base for the first cycle (the rules judge at the cycle).
    try (Engine engine = Engine.create("{\"seed\": 3, \"slow_start\": {\"window_ms\": 0}}",
            ClockMode.MANUAL);
        WeightedMeterBinder binder = new WeightedMeterBinder(engine, true, 0)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Service svc = engine.service("orders");
      svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {1, 1});
      binder.bindTo(registry);
      long b = svc.endpointKey("b:1");
      int toB = 0;
      for (int i = 0; i < 400; i++) {
        Pick p = svc.pick();
        boolean failing = p.key() == b;
        toB += failing ? 1 : 0;
        svc.complete(p, 2.0, failing ? Outcome.HTTP_5XX : Outcome.SUCCESS);
      }
      engine.advance(Duration.ofSeconds(5));
      binder.refresh(true);
      double shareB = registry.get("weighted.endpoint.share").tag("endpoint", "b:1").gauge().value();
      double shareA = registry.get("weighted.endpoint.share").tag("endpoint", "a:1").gauge().value();
      assertThat(shareB).isEqualTo(toB / 400.0);
      assertThat(shareA + shareB).isEqualTo(1.0);
      assertThat(shareB).isLessThan(0.2);  // the picker avoided it; a weighted split gives 0.5
    }
  }

  @Test
  void expectedShareGaugeIsTheModelsPredictionBesideTheWeight() {
    // The weighted picker with weights 3 and 1: the model expects exactly the weights' split,
    // while the weight gauges read 3 and 1.
    try (Engine engine = Engine.create("{\"seed\": 3, \"picker\": {\"mode\": \"weighted\"}}",
            ClockMode.MANUAL);
        WeightedMeterBinder binder = new WeightedMeterBinder(engine, true, 0)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Service svc = engine.service("orders");
      svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {3, 1});
      binder.bindTo(registry);
      binder.refresh(true);
      double expectedA = registry.get("weighted.endpoint.expected.share").tag("endpoint", "a:1")
          .gauge().value();
      double expectedB = registry.get("weighted.endpoint.expected.share").tag("endpoint", "b:1")
          .gauge().value();
      assertThat(expectedA).isEqualTo(0.75);
      assertThat(expectedB).isEqualTo(0.25);
      assertThat(registry.get("weighted.endpoint.weight").tag("endpoint", "a:1").gauge().value())
          .isEqualTo(3.0);
    }
  }

  @Test
  void budgetGaugesFollowTheServicesErrorBudgetAndLeaveWhenItIsTurnedOff() {
    // Every endpoint fails one call in ten against a 1% budget: over it, and the controller
    // raises the picker's price on failures from picker.error_cost (500).
    try (Engine engine = Engine.create("{\"seed\": 5, \"slow_start\": {\"window_ms\": 0}, "
            + "\"budget\": {\"max_error_rate\": 0.01}}", ClockMode.MANUAL);
        WeightedMeterBinder binder = new WeightedMeterBinder(engine, true, 0)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Service svc = engine.service("orders");
      svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {1, 1});
      binder.bindTo(registry);
      assertThat(registry.get("weighted.service.error.budget").tag("service", "orders").gauge()
          .value()).isEqualTo(0.01);
      assertThat(registry.get("weighted.service.error.budget.met").tag("service", "orders")
          .gauge().value()).isEqualTo(1.0);  // no evidence yet
      double[] cost = new double[2];
      for (int cycle = 0; cycle < 2; cycle++) {
        for (int i = 0; i < 400; i++) {
          Pick p = svc.pick();
          svc.complete(p, 2.0, i % 10 == 0 ? Outcome.HTTP_5XX : Outcome.SUCCESS);
        }
        engine.advance(Duration.ofSeconds(5));
        binder.refresh(true);
        cost[cycle] = registry.get("weighted.service.error.cost").tag("service", "orders")
            .gauge().value();
      }
      assertThat(registry.get("weighted.service.error.budget.observed").tag("service", "orders")
          .gauge().value()).isEqualTo(0.1);
      assertThat(registry.get("weighted.service.error.budget.met").tag("service", "orders")
          .gauge().value()).isEqualTo(0.0);
      // The first window over the budget raises the price from picker.error_cost (500). The
      // second fails as much at the raised price (every endpoint fails alike): the raise bought
      // nothing, so the controller searches a price below where the raises began and reports
      // the budget as limited (it cannot be met by any price).
      assertThat(cost[0]).isGreaterThan(500.0);
      assertThat(cost[1]).isLessThan(500.0);
      assertThat(registry.get("weighted.service.error.budget.limited").tag("service", "orders")
          .gauge().value()).isEqualTo(1.0);

      engine.reload("{\"seed\": 5, \"slow_start\": {\"window_ms\": 0}}");
      binder.refresh(true);
      assertThat(registry.find("weighted.service.error.budget").tag("service", "orders").gauge())
          .isNull();
      assertThat(registry.find("weighted.service.error.cost").gauge()).isNull();
    }
  }
}
