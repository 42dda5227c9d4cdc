import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;
import java.time.Duration;

/** A short simulation against a loopback demo target that declares assertions, so that Gatling writes
 * ASSERTION records into simulation.log; request names are non-ASCII and one endpoint answers 404 (KO). */
public class AssertSim extends Simulation {
  HttpProtocolBuilder proto = http.baseUrl(System.getProperty("target", "http://127.0.0.1:18080"));

  ScenarioBuilder browse = scenario("Пользователь browse")
      .exec(http("accueil ✓").get("/"))
      .exec(group("détail").on(exec(http("slow 慢").get("/slow")).exec(http("missing").get("/does-not-exist"))));

  {
    setUp(browse.injectOpen(constantUsersPerSec(Double.parseDouble(System.getProperty("rate", "20")))
            .during(Duration.ofSeconds(Integer.parseInt(System.getProperty("seconds", "3"))))))
        .protocols(proto)
        .assertions(global().responseTime().max().lt(2000),
                    global().successfulRequests().percent().gt(60.0),
                    details("détail", "slow 慢").responseTime().percentile3().lt(500));
  }
}
