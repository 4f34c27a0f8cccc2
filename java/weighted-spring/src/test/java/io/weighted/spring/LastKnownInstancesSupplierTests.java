package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/** A registry that fails keeps the last list serving; what it really answers passes through. */
class LastKnownInstancesSupplierTests {
  /** Answers with {@code answer}, or throws when it holds null (the registry is unreachable). */
  static final class Registry implements DiscoveryClient {
    final AtomicReference<List<ServiceInstance>> answer = new AtomicReference<>();

    @Override
    public String description() {
      return "test registry";
    }

    @Override
    public List<ServiceInstance> getInstances(String serviceId) {
      List<ServiceInstance> a = answer.get();
      if (a == null) {
        throw new IllegalStateException("connection refused");
      }
      return a;
    }

    @Override
    public List<String> getServices() {
      return List.of("svc");
    }
  }

  static ServiceInstance instance(String host) {
    return new DefaultServiceInstance(host, "svc", host, 80, false);
  }

  @Test
  void aFailingRegistryKeepsTheLastListAndARealAnswerReplacesIt() {
    Registry registry = new Registry();
    LastKnownInstancesSupplier s =
        new LastKnownInstancesSupplier(registry, "svc", Duration.ofSeconds(5));
    assertThat(s.get().blockFirst()).isEmpty();  // failing before any answer: nothing known
    assertThat(s.failures()).isEqualTo(1);

    List<ServiceInstance> two = List.of(instance("a"), instance("b"));
    registry.answer.set(two);
    assertThat(s.get().blockFirst()).isSameAs(two);
    assertThat(s.isFailing()).isFalse();

    registry.answer.set(null);
    for (int i = 0; i < 3; i++) {
      assertThat(s.get().blockFirst()).isSameAs(two);
    }
    assertThat(s.failures()).isEqualTo(4);
    assertThat(s.isFailing()).isTrue();

    registry.answer.set(List.of());  // the registry answers: none left, which is the truth
    assertThat(s.get().blockFirst()).isEmpty();
    registry.answer.set(null);
    assertThat(s.get().blockFirst()).isEmpty();  // the last answer was empty: it stays empty
  }

  @Test
  void badArgumentsAreRefusedWithWhatWasGiven() {
    assertThatThrownBy(() -> new LastKnownInstancesSupplier(new Registry(), "svc", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT0S");
    assertThatThrownBy(() -> new LastKnownInstancesSupplier(null, "svc", Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("discovery client");
  }
}
