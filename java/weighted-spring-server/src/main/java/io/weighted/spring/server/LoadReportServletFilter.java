package io.weighted.spring.server;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Servlet applications: the header goes on before the application writes (a committed response
 * takes no more headers), and the request counts as ended when its response is complete,
 * asynchronous ones included.
 */
public class LoadReportServletFilter extends OncePerRequestFilter implements Ordered {
  private final LoadSampler sampler;

  public LoadReportServletFilter(LoadSampler sampler) {
    this.sampler = sampler;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE + 10;  // outside the application's own filters
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
      FilterChain chain) throws ServletException, IOException {
    long started = sampler.begin();
    boolean ended = false;
    try {
      response.setHeader(LoadSampler.HEADER, sampler.header());
      chain.doFilter(request, response);
      if (request.isAsyncStarted()) {
        request.getAsyncContext().addListener(new End(response, started));
      } else {
        ended = true;
        sampler.end(response.getStatus(), started);
      }
    } catch (IOException | ServletException | RuntimeException | Error e) {
      if (!ended) {
        ended = true;
        sampler.end(500, started);
      }
      throw e;
    }
  }

  private final class End implements AsyncListener {
    private final HttpServletResponse response;
    private final long started;
    private boolean done;

    End(HttpServletResponse response, long started) {
      this.response = response;
      this.started = started;
    }

    private synchronized void end(int status) {
      if (!done) {
        done = true;
        sampler.end(status, started);
      }
    }

    @Override
    public void onComplete(AsyncEvent event) {
      end(response.getStatus());
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      end(503);
    }

    @Override
    public void onError(AsyncEvent event) {
      end(500);
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
      event.getAsyncContext().addListener(this);
    }
  }
}
