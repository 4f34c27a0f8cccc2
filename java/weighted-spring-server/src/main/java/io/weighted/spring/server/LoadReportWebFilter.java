package io.weighted.spring.server;

import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/** WebFlux applications: the same header on every response, the request ended when it is. */
public class LoadReportWebFilter implements WebFilter, Ordered {
  private final LoadSampler sampler;

  public LoadReportWebFilter(LoadSampler sampler) {
    this.sampler = sampler;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE + 10;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    long started = sampler.begin();
    exchange.getResponse().getHeaders().set(LoadSampler.HEADER, sampler.header());
    return chain.filter(exchange).doFinally(signal -> {
      HttpStatusCode status = exchange.getResponse().getStatusCode();
      int code = status != null ? status.value() : signal == SignalType.ON_ERROR ? 500 : 200;
      sampler.end(signal == SignalType.CANCEL && status == null ? 499 : code, started);
    });
  }
}
