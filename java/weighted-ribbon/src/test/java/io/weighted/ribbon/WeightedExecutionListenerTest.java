package io.weighted.ribbon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.netflix.client.DefaultLoadBalancerRetryHandler;
import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.reactive.ExecutionContext;
import com.netflix.loadbalancer.reactive.LoadBalancerCommand;
import com.netflix.loadbalancer.reactive.ServerOperation;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import java.net.ConnectException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rx.Observable;

/**
 * Outcomes of real {@code LoadBalancerCommand}s (Ribbon's own retry loop, server selection and
 * listener invoker) reach the engine: through {@code track(operation)} with a command built the
 * plain way, and through the listener in a command that has an execution context.
 */
class WeightedExecutionListenerTest {
  Engine engine;
  WeightedRule rule;
  BaseLoadBalancer lb;
  final AtomicLong nanos = new AtomicLong();
  WeightedExecutionListener<Object, Integer> listener;

  @BeforeEach
  void setUp() {
    engine = Engine.create("{\"seed\": 5, \"slow_start\": {\"window_ms\": 0}}", ClockMode.MANUAL);
    rule = new WeightedRule(engine, "orders");
    lb = new BaseLoadBalancer();
    lb.setRule(rule);
    lb.addServers(List.of(new Server("h1", 80), new Server("h2", 80)));
    listener = new WeightedExecutionListener<>(rule, status -> status, nanos::get);
  }

  @AfterEach
  void tearDown() {
    lb.shutdown();
    engine.close();
  }

  /** A command as Ribbon's README builds one: a load balancer, nothing else. */
  LoadBalancerCommand<Integer> plainCommand() {
    return LoadBalancerCommand.<Integer>builder().withLoadBalancer(lb).build();
  }

  long total(String outcome) {
    long n = 0;
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        n += ((Number) ((Map<?, ?>) ((Map<?, ?>) e).get("totals")).get(outcome)).longValue();
      }
    }
    return n;
  }

  @Test
  void aPlainCommandsResponsesAreRecordedThroughTrack() {
    ServerOperation<Integer> ok = server -> {
      nanos.addAndGet(3_000_000);
      return Observable.just(200);
    };
    for (int i = 0; i < 10; i++) {
      assertThat(plainCommand().submit(listener.track(ok)).toBlocking().first()).isEqualTo(200);
    }
    assertThat(plainCommand().submit(listener.track(server -> Observable.just(503)))
        .toBlocking().first()).isEqualTo(503);
    assertThat(total("success")).isEqualTo(10);
    assertThat(total("http_5xx")).isEqualTo(1);
    engine.runCycle();
    Map<?, ?> window = (Map<?, ?>) ((Map<?, ?>) ((List<?>) ((Map<?, ?>) ((List<?>) Json
        .parseObject(engine.snapshotJson()).get("services")).get(0)).get("endpoints")).get(0))
        .get("window");
    assertThat(((Number) window.get("p99_ms")).doubleValue()).isBetween(2.9, 3.1);
  }

  @Test
  void eachAttemptOfARetriedCommandIsRecordedOnce() {
    AtomicInteger attempts = new AtomicInteger();
    LoadBalancerCommand<Integer> retrying = LoadBalancerCommand.<Integer>builder()
        .withLoadBalancer(lb).withRetryHandler(new DefaultLoadBalancerRetryHandler(0, 1, true))
        .build();
    Integer answer = retrying.submit(listener.track(server -> attempts.incrementAndGet() == 1
        ? Observable.error(new ConnectException("refused by " + server))
        : Observable.just(200))).toBlocking().first();
    assertThat(answer).isEqualTo(200);
    assertThat(attempts).hasValue(2);
    assertThat(total("connect_error")).isEqualTo(1);
    assertThat(total("success")).isEqualTo(1);
  }

  @Test
  void anAttemptGivenUpOnIsATimeoutAndAnotherFaultIsNotTheServers() throws InterruptedException {
    assertThatThrownBy(() -> plainCommand()
        .submit(listener.track(server -> Observable.<Integer>never()))
        .timeout(50, TimeUnit.MILLISECONDS).toBlocking().first())
        .hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
    // RxJava 1 unsubscribes the source after the error reached the blocking caller, on the
    // timer's thread: wait for it (bounded).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (total("timeout") == 0 && System.nanoTime() < deadline) {
      Thread.sleep(2);
    }
    assertThat(total("timeout")).isEqualTo(1);
    assertThatThrownBy(() -> plainCommand()
        .submit(listener.track(server -> Observable.<Integer>error(
            new IllegalArgumentException("a bug in the caller"))))
        .toBlocking().first()).isInstanceOf(IllegalArgumentException.class);
    assertThat(total("timeout") + total("success") + total("connect_error")).isEqualTo(1);
  }

  @Test
  void theListenerRecordsInACommandWithAnExecutionContext() {
    for (int i = 0; i < 4; i++) {
      LoadBalancerCommand<Integer> c = LoadBalancerCommand.<Integer>builder()
          .withLoadBalancer(lb).withListeners(List.of(listener))
          .withExecutionContext(new ExecutionContext<>(new Object(), null, null, null)).build();
      int status = i == 0 ? 503 : 200;
      assertThat(c.submit(server -> Observable.just(status)).toBlocking().first())
          .isEqualTo(status);
    }
    assertThat(total("success")).isEqualTo(3);
    assertThat(total("http_5xx")).isEqualTo(1);
  }

  @Test
  void ribbonCallsNoListenerOfACommandBuiltWithoutAnExecutionContext() {
    // Why track() exists: Ribbon's invoker dereferences the missing context before each listener
    // call (and logs the NullPointerException), so the listener never runs.
    LoadBalancerCommand<Integer> c = LoadBalancerCommand.<Integer>builder()
        .withLoadBalancer(lb).withListeners(List.of(listener)).build();
    assertThat(c.submit(server -> Observable.just(200)).toBlocking().first()).isEqualTo(200);
    assertThat(total("success")).isZero();
    assertThat(plainCommand().submit(listener.track(server -> Observable.just(200)))
        .toBlocking().first()).isEqualTo(200);
    assertThat(total("success")).isEqualTo(1);
  }
}
