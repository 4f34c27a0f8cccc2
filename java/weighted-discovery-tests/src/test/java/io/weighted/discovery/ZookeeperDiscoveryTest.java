package io.weighted.discovery;

import io.weighted.spring.LastKnownInstancesSupplier;
import java.util.HashMap;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

/**
 * A real ZooKeeper server in the test's JVM (Curator's TestingServer), backends registered as
 * Spring Cloud Zookeeper registers a service (Curator's service discovery under /services, a
 * {@link ZookeeperInstance} payload whose metadata holds the weight), and the client on Spring
 * Cloud Zookeeper discovery. That client asks ZooKeeper on every call and Spring's discovery
 * supplier turns a failed call into an empty list, so the client's base is
 * {@link LastKnownInstancesSupplier}: the registry's outage leaves the last list serving.
 */
class ZookeeperDiscoveryTest extends DiscoveryScenario {
  private TestingServer zk;
  private CuratorFramework registrar;
  private ServiceDiscovery<ZookeeperInstance> discovery;
  private final Map<String, ServiceInstance<ZookeeperInstance>> registered = new HashMap<>();

  @BeforeAll
  void start() throws Exception {
    zk = new TestingServer(true);
    // The backends' side: one session holds their ephemeral registrations, and it outlives a
    // short outage (ZooKeeper keeps a session while its timeout has not passed).
    registrar = CuratorFrameworkFactory.newClient(zk.getConnectString(), 60_000, 5_000,
        new RetryOneTime(100));
    registrar.start();
    discovery = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class).client(registrar)
        .basePath("/services").serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class))
        .build();
    discovery.start();
    startClient();
  }

  @Override
  protected Map<String, Object> registryProperties() {
    Map<String, Object> p = new HashMap<>();
    p.put("spring.cloud.zookeeper.connect-string", zk.getConnectString());
    p.put("spring.cloud.zookeeper.discovery.register", "false");
    p.put("spring.cloud.zookeeper.connection-timeout", "2s");
    p.put("spring.cloud.zookeeper.max-retries", "1");
    p.put("eureka.client.enabled", "false");
    p.put("test.discovery.base", "last-known");
    return p;
  }

  private ServiceInstance<ZookeeperInstance> instance(Backend b, String id, String weight)
      throws Exception {
    return ServiceInstance.<ZookeeperInstance>builder().name(SERVICE).id(id)
        .address("127.0.0.1").port(b.port())
        .uriSpec(new UriSpec("{scheme}://{address}:{port}"))  // Spring Cloud Zookeeper's default
        .payload(new ZookeeperInstance(id, SERVICE, new HashMap<>(Map.of("weight", weight))))
        .build();
  }

  @Override
  protected void register(Backend b, String instanceId, String weight) throws Exception {
    ServiceInstance<ZookeeperInstance> i = instance(b, instanceId, weight);
    discovery.registerService(i);
    registered.put(instanceId, i);
  }

  @Override
  protected void deregister(Backend b, String instanceId) throws Exception {
    discovery.unregisterService(registered.remove(instanceId));
  }

  /** A new payload written to the instance's node (curator-x-discovery's updateService). */
  @Override
  protected void setWeight(Backend b, String instanceId, String weight) throws Exception {
    ServiceInstance<ZookeeperInstance> i = instance(b, instanceId, weight);
    discovery.updateService(i);
    registered.put(instanceId, i);
  }

  @Override
  protected void stopRegistry() throws Exception {
    zk.stop();
  }

  @Override
  protected boolean clientSeesOutage() {
    for (ServiceInstanceListSupplier s : supplierChain()) {
      if (s instanceof LastKnownInstancesSupplier k) {
        return k.isFailing() && k.failures() >= 3;
      }
    }
    throw new AssertionError("no LastKnownInstancesSupplier in " + supplierChain());
  }

  /**
   * On reconnecting, Curator's service discovery registers each instance again, deleting its
   * node and creating it anew: a list read in between lacks that instance, and the balancer
   * then drops the endpoint's state and brings it back through slow start. Measured here: one
   * run of several saw it.
   */
  @Override
  protected boolean restartKeepsEveryEndpoint() {
    return false;
  }

  /** Same port, same data: the sessions and their registrations survive the outage. */
  @Override
  protected void startRegistry() throws Exception {
    zk.restart();
    registrar.blockUntilConnected();
  }

  @Override
  @AfterAll
  void stopAll() {
    super.stopAll();
    closeAll(discovery, registrar, zk);
  }

  /** Closes each, the later ones too when an earlier one fails (ZooKeeper may be down). */
  private static void closeAll(AutoCloseable... all) {
    IllegalStateException first = null;
    for (AutoCloseable c : all) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        first = first == null ? new IllegalStateException("closing " + c, e) : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
