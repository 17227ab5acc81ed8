import Foundation
import NIOCore
import Synchronization

/// A request as the HTTP layer hands it over.
struct StripeIncomingRequest: Sendable {
  var method: String
  var path: String
  var authorization: String?
  var idempotencyKey: String?
  var stripeVersion: String?
  var body: String
  /// The URL's query (after `?`), form-encoded: a GET's parameters (`expand[]`, a search's `query`).
  var query: String = ""
}

/// A response ready to write.
struct StripeHTTPResponse: Sendable {
  var status: Int
  var headers: [(String, String)]
  var body: String
}

/// What the HTTP layer does with a request's connection.
enum StripeOutcome: Sendable {
  case respond(StripeHTTPResponse)
  /// Reset the connection without answering.
  case reset
  /// Nothing to answer: the connection is gone.
  case drop
}

/// The API's endpoints.
enum StripeEndpoint: Sendable, Equatable {
  case createPaymentIntent
  case capture(String)
  case cancel(String)
  case createRefund
  case createToken
  case retrievePaymentIntent(String)
  case retrieveRefund(String)
  case retrieveCharge(String)
  case retrieveToken(String)
  case retrievePaymentMethod(String)
  case createPaymentMethod
  case searchPaymentIntents
  case retrieveEvent(String)
  case retrieveDispute(String)
  case retrieveBalanceTransaction(String)
  case list(StripeTestLedger.ListKind)
  case createCustomer
  case retrieveCustomer(String)
  case createSetupIntent
  case retrieveSetupIntent(String)
  case attachPaymentMethod(String)
  case detachPaymentMethod(String)

  init?(method: String, path: String) {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard parts.count >= 3, parts[0].isEmpty, parts[1] == "v1" else { return nil }
    switch (method, Array(parts.dropFirst(2))) {
    case ("POST", ["payment_intents"]): self = .createPaymentIntent
    case ("POST", let rest) where rest.count == 3 && rest[0] == "payment_intents" && !rest[1].isEmpty:
      switch rest[2] {
      case "capture": self = .capture(rest[1])
      case "cancel": self = .cancel(rest[1])
      default: return nil
      }
    case ("POST", let rest) where rest.count == 3 && rest[0] == "payment_methods" && !rest[1].isEmpty:
      switch rest[2] {
      case "attach": self = .attachPaymentMethod(rest[1])
      case "detach": self = .detachPaymentMethod(rest[1])
      default: return nil
      }
    case ("POST", ["customers"]): self = .createCustomer
    case ("POST", ["setup_intents"]): self = .createSetupIntent
    case ("GET", ["setup_intents"]): self = .list(.setupIntents)
    case ("POST", ["refunds"]): self = .createRefund
    case ("POST", ["tokens"]): self = .createToken
    case ("POST", ["payment_methods"]): self = .createPaymentMethod
    case ("GET", ["payment_intents", "search"]): self = .searchPaymentIntents
    case ("GET", ["payment_intents"]): self = .list(.paymentIntents)
    case ("GET", ["refunds"]): self = .list(.refunds)
    case ("GET", ["disputes"]): self = .list(.disputes)
    case ("GET", ["events"]): self = .list(.events)
    case ("GET", ["balance_transactions"]): self = .list(.balanceTransactions)
    case ("GET", let rest) where rest.count == 2 && !rest[1].isEmpty:
      switch rest[0] {
      case "payment_intents": self = .retrievePaymentIntent(rest[1])
      case "refunds": self = .retrieveRefund(rest[1])
      case "charges": self = .retrieveCharge(rest[1])
      case "tokens": self = .retrieveToken(rest[1])
      case "payment_methods": self = .retrievePaymentMethod(rest[1])
      case "events": self = .retrieveEvent(rest[1])
      case "disputes": self = .retrieveDispute(rest[1])
      case "balance_transactions": self = .retrieveBalanceTransaction(rest[1])
      case "customers": self = .retrieveCustomer(rest[1])
      case "setup_intents": self = .retrieveSetupIntent(rest[1])
      default: return nil
      }
    default: return nil
    }
  }

  var route: StripeTestServer.Route? {
    switch self {
    case .createPaymentIntent: .createPaymentIntent
    case .capture: .capture
    case .cancel: .cancel
    case .createRefund: .refund
    case .createToken: .createToken
    case .createPaymentMethod: .createPaymentMethod
    case .createCustomer: .createCustomer
    case .createSetupIntent: .createSetupIntent
    case .attachPaymentMethod: .attachPaymentMethod
    case .detachPaymentMethod: .detachPaymentMethod
    default: nil
    }
  }

  var isPost: Bool { route != nil }

  func matches(_ route: StripeTestServer.Route) -> Bool { route == .any || route == self.route }
}

/// The server's shared state and request processing, independent of the connection.
final class StripeServerCore: Sendable {
  struct SavedResult: Sendable {
    var endpoint: String
    var params: [String]
    var status: Int
    var body: String
    var requestID: String
  }

  enum IdempotencyEntry: Sendable {
    /// Reserved by a request that has not finished executing (held before executing).
    case inProgress(owner: Int)
    case saved(SavedResult)
  }

  struct State: Sendable {
    var ledger = StripeTestLedger()
    var faults: [(route: StripeTestServer.Route, fault: StripeTestServer.Fault)] = []
    var idempotency: [String: IdempotencyEntry] = [:]
    var requests: [StripeTestServer.RecordedRequest] = []
    var latencyMilliseconds = 0
    /// Answers waiting out the latency now, and the most that ever waited at once.
    var delayedAnswers = 0
    var peakDelayedAnswers = 0
  }

  static let defaultStripeVersion = "2024-06-20"

  let secretKey: String
  let state = Mutex(State())

  init(secretKey: String) { self.secretKey = secretKey }


  /// Records the request and prepares its processing; `start()` the exchange, and its promise
  /// completes (on `eventLoop`) with what to do with the connection.
  func exchange(for request: StripeIncomingRequest, eventLoop: any EventLoop) -> StripeExchange {
    let index = state.withLock { state -> Int in
      state.requests.append(
        .init(
          method: request.method, path: request.path, idempotencyKey: request.idempotencyKey,
          stripeVersion: request.stripeVersion, replayed: false, status: 0, body: request.body))
      return state.requests.count - 1
    }
    return StripeExchange(
      core: self, request: request, eventLoop: eventLoop, promise: eventLoop.makePromise(of: StripeOutcome.self),
      index: index, requestID: "req_test" + String(format: "%06d", index + 1))
  }

  // MARK: - Steps

  func authenticate(_ header: String?) -> StripeAPIError? {
    let noKey = StripeAPIError.invalidRequest(
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer "
        + "auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for "
        + "details, or we can help at https://support.stripe.com/.", status: 401)
    guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return noKey }
    let key: String
    let lowered = header.lowercased()
    if lowered.hasPrefix("bearer ") {
      key = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    } else if lowered.hasPrefix("basic ") {
      guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
        let credentials = String(data: data, encoding: .utf8)
      else { return noKey }
      key = String(credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    } else {
      return noKey
    }
    guard !key.isEmpty else { return noKey }
    guard key == secretKey else {
      return .invalidRequest("Invalid API Key provided: \(Self.mask(key))", status: 401)
    }
    return nil
  }

  /// A key as Stripe echoes a wrong one: its `sk_test_`-style prefix and last four characters,
  /// the rest asterisks.
  static func mask(_ key: String) -> String {
    let characters = Array(key)
    guard characters.count > 4 else { return String(repeating: "*", count: characters.count) }
    var prefix = ["sk_test_", "sk_live_", "rk_test_", "rk_live_", "pk_test_", "pk_live_"]
      .first { key.hasPrefix($0) }?.count ?? 0
    if prefix + 4 >= characters.count { prefix = 0 }
    return String(characters[..<prefix]) + String(repeating: "*", count: characters.count - prefix - 4)
      + String(characters.suffix(4))
  }

  /// `YYYY-MM-DD`, optionally followed by a release name (`.basil`) or `; beta=v1` flags.
  static func isValidVersion(_ version: String) -> Bool {
    let date = version.prefix(10)
    guard date.count == 10 else { return false }
    for (offset, character) in date.enumerated() {
      if offset == 4 || offset == 7 {
        guard character == "-" else { return false }
      } else {
        guard character.isASCII, character.isNumber else { return false }
      }
    }
    let rest = version.dropFirst(10)
    return rest.isEmpty || rest.hasPrefix(".") || rest.hasPrefix(";")
  }

  func takeFault(for endpoint: StripeEndpoint) -> StripeTestServer.Fault? {
    state.withLock { state in
      guard let index = state.faults.firstIndex(where: { endpoint.matches($0.route) }) else { return nil }
      return state.faults.remove(at: index).fault
    }
  }

  /// Marks `key` in progress for `owner` if nothing is known about it; true if it did.
  func reserve(_ key: String, owner: Int) -> Bool {
    state.withLock { state in
      guard state.idempotency[key] == nil else { return false }
      state.idempotency[key] = .inProgress(owner: owner)
      return true
    }
  }

  func unreserve(_ key: String, owner: Int) {
    state.withLock { state in
      if case .inProgress(let current) = state.idempotency[key], current == owner { state.idempotency[key] = nil }
    }
  }

  struct Executed: Sendable {
    var status: Int
    var body: String
    var headers: [(String, String)]
    var replayed: Bool
  }

  /// The idempotency layer and the endpoint, atomically: a replay, an idempotency error, a
  /// validation error (none saved), or the endpoint's result (saved under the key).
  func execute(
    _ endpoint: StripeEndpoint, _ request: StripeIncomingRequest, owner: Int, requestID: String,
    storedServerError: StripeTestServer.StoredServerError? = nil
  ) -> Executed {
    let form = StripeForm(decoding: endpoint.isPost ? request.body : request.query)
    let key = endpoint.isPost ? request.idempotencyKey : nil
    let identity = "\(request.method) \(request.path)"
    return state.withLock { state in
      let now = state.ledger.now
      if let key, let entry = state.idempotency[key] {
        switch entry {
        case .inProgress(let current) where current != owner:
          let error = StripeAPIError(
            status: 409, type: "idempotency_error",
            message: "There is currently another in-progress request using this Idempotency-Key ('\(key)'). The "
              + "idempotency key provided is currently being used in another request; try again later.",
            code: "idempotency_key_in_use")
          return Executed(
            status: 409, body: error.body.rendered, headers: [("Stripe-Should-Retry", "true")], replayed: false)
        case .inProgress:
          break
        case .saved(let saved):
          if saved.endpoint != identity {
            let error = StripeAPIError(
              status: 400, type: "idempotency_error",
              message: "Keys for idempotent requests can only be used for the same endpoint they were first used for "
                + "('\(saved.endpoint)' vs '\(identity)'). Try using a key other than '\(key)' if you meant to "
                + "execute a different request.")
            return Executed(status: 400, body: error.body.rendered, headers: [], replayed: false)
          }
          if saved.params != form.canonical {
            let error = StripeAPIError(
              status: 400, type: "idempotency_error",
              message: "Keys for idempotent requests can only be used with the same parameters they were first used "
                + "with. Try using a key other than '\(key)' if you meant to execute a different request.")
            return Executed(status: 400, body: error.body.rendered, headers: [], replayed: false)
          }
          return Executed(
            status: saved.status, body: saved.body,
            headers: [("Idempotent-Replayed", "true"), ("Original-Request", saved.requestID)], replayed: true)
        }
      }
      if let error = Self.validate(endpoint, form) {
        if let key, case .inProgress(owner) = state.idempotency[key] { state.idempotency[key] = nil }
        return Executed(status: error.status, body: error.body.rendered, headers: [], replayed: false)
      }
      var result: Result<StripeJSON, StripeAPIError>
      // The events the endpoint causes name this request.
      state.ledger.request = (requestID, key)
      defer { state.ledger.request = nil }
      switch endpoint {
      case _ where storedServerError == .withoutExecuting: result = .failure(Self.storedServerError)
      case .createPaymentIntent: result = state.ledger.createPaymentIntent(form, idempotencyKey: key, now: now)
      case .capture(let id): result = state.ledger.capture(id, form, now: now)
      case .cancel(let id): result = state.ledger.cancel(id, form, now: now)
      case .createRefund: result = state.ledger.createRefund(form, now: now)
      case .createToken: result = state.ledger.createToken(form, idempotencyKey: key, now: now)
      case .createPaymentMethod: result = state.ledger.createPaymentMethod(form, idempotencyKey: key, now: now)
      case .searchPaymentIntents: result = state.ledger.searchPaymentIntents(form)
      case .retrievePaymentIntent(let id): result = state.ledger.retrievePaymentIntent(id, form)
      case .retrieveRefund(let id): result = state.ledger.retrieveRefund(id)
      case .retrieveCharge(let id): result = state.ledger.retrieveCharge(id)
      case .retrieveToken(let id): result = state.ledger.retrieveToken(id)
      case .retrievePaymentMethod(let id): result = state.ledger.retrievePaymentMethod(id)
      case .retrieveEvent(let id): result = state.ledger.retrieveEvent(id)
      case .retrieveDispute(let id): result = state.ledger.retrieveDispute(id)
      case .retrieveBalanceTransaction(let id): result = state.ledger.retrieveBalanceTransaction(id)
      case .list(let kind): result = state.ledger.list(kind, form)
      case .createCustomer: result = state.ledger.createCustomer(form, idempotencyKey: key, now: now)
      case .retrieveCustomer(let id): result = state.ledger.retrieveCustomer(id)
      case .createSetupIntent: result = state.ledger.createSetupIntent(form, idempotencyKey: key, now: now)
      case .retrieveSetupIntent(let id): result = state.ledger.retrieveSetupIntent(id)
      case .attachPaymentMethod(let id): result = state.ledger.attachPaymentMethod(id, form, now: now)
      case .detachPaymentMethod(let id): result = state.ledger.detachPaymentMethod(id)
      }
      if storedServerError == .afterExecuting { result = .failure(Self.storedServerError) }
      let (status, body): (Int, String)
      switch result {
      case .success(let json): (status, body) = (200, json.rendered)
      case .failure(let error): (status, body) = (error.status, error.body.rendered)
      }
      if let key {
        state.idempotency[key] = .saved(
          SavedResult(endpoint: identity, params: form.canonical, status: status, body: body, requestID: requestID))
      }
      return Executed(status: status, body: body, headers: [], replayed: false)
    }
  }

  /// The 500 a stored-server-error fault saves under the key (Stripe saves an endpoint's 500 too).
  static let storedServerError = StripeAPIError(status: 500, type: "api_error", message: "An unknown error occurred")

  static func validate(_ endpoint: StripeEndpoint, _ form: StripeForm) -> StripeAPIError? {
    switch endpoint {
    case .createPaymentMethod: StripeTestLedger.validatePaymentMethod(form)
    case .searchPaymentIntents: nil
    case .createPaymentIntent: StripeTestLedger.validateCreate(form)
    case .capture: StripeTestLedger.validateCapture(form)
    case .cancel: StripeTestLedger.validateCancel(form)
    case .createRefund: StripeTestLedger.validateRefund(form)
    case .createToken: StripeTestLedger.validateToken(form)
    case .list(let kind): StripeTestLedger.validateList(kind, form)
    case .createCustomer: StripeTestLedger.validateCustomer(form)
    case .createSetupIntent: StripeTestLedger.validateSetupIntent(form)
    case .attachPaymentMethod: StripeTestLedger.validateAttach(form)
    case .detachPaymentMethod: StripeTestLedger.validateDetach(form)
    case .retrieveCustomer, .retrieveSetupIntent: nil
    case .retrievePaymentIntent, .retrieveRefund, .retrieveCharge, .retrieveToken, .retrievePaymentMethod,
      .retrieveEvent, .retrieveDispute, .retrieveBalanceTransaction:
      nil
    }
  }

  /// Stripe's headers around a body.
  func response(
    status: Int, body: String, request: StripeIncomingRequest, requestID: String, extra: [(String, String)] = []
  ) -> StripeHTTPResponse {
    var headers: [(String, String)] = [
      ("Content-Type", "application/json"),
      ("Cache-Control", "no-cache, no-store"),
      ("Request-Id", requestID),
      ("Stripe-Version", request.stripeVersion ?? Self.defaultStripeVersion),
    ]
    if request.method == "POST", let key = request.idempotencyKey { headers.append(("Idempotency-Key", key)) }
    headers += extra
    return StripeHTTPResponse(status: status, headers: headers, body: body)
  }
}

/// One request's way through the server: authentication, routing, faults, idempotency, the
/// endpoint, and the answer (after the configured latency).
final class StripeExchange: Sendable {
  enum Phase: Sendable { case running, held, done }

  let core: StripeServerCore
  let request: StripeIncomingRequest
  let eventLoop: any EventLoop
  let promise: EventLoopPromise<StripeOutcome>
  let index: Int
  let requestID: String
  let phase = Mutex(Phase.running)
  /// The Idempotency-Key this request reserved while held before executing.
  let reservation = Mutex<String?>(nil)

  init(
    core: StripeServerCore, request: StripeIncomingRequest, eventLoop: any EventLoop,
    promise: EventLoopPromise<StripeOutcome>, index: Int, requestID: String
  ) {
    self.core = core
    self.request = request
    self.eventLoop = eventLoop
    self.promise = promise
    self.index = index
    self.requestID = requestID
  }

  func start() {
    if let error = core.authenticate(request.authorization) {
      return answer(error, extra: [("WWW-Authenticate", "Basic realm=\"Stripe\"")])
    }
    guard let endpoint = StripeEndpoint(method: request.method, path: request.path) else {
      return answer(
        .invalidRequest(
          "Unrecognized request URL (\(request.method): \(request.path)). Please see https://stripe.com/docs or we "
            + "can help at https://support.stripe.com/.", status: 404))
    }
    if let version = request.stripeVersion, !StripeServerCore.isValidVersion(version) {
      return answer(.invalidRequest("Invalid Stripe API version: \(version)"))
    }
    if endpoint.isPost, let key = request.idempotencyKey, key.count > 255 {
      return answer(.invalidRequest("Idempotency-Key must be at most 255 characters long."))
    }
    let fault = core.takeFault(for: endpoint)
    switch fault {
    case .rateLimited(let seconds):
      answer(
        StripeAPIError(
          status: 429, type: "invalid_request_error",
          message: "Request rate limit exceeded. You can learn more about rate limits here "
            + "https://stripe.com/docs/rate-limits.", code: "rate_limit"),
        extra: [("Retry-After", String(seconds))])
    case .serverErrorBeforeExecuting:
      answer(
        StripeAPIError(status: 500, type: "api_error", message: "An unknown error occurred"),
        extra: [("Stripe-Should-Retry", "true")])
    case .answerWithoutExecuting(let status, let headers, let body):
      finish(.respond(StripeHTTPResponse(status: status, headers: headers, body: body)), status: status, replayed: false)
    case .holdBeforeExecuting(let gate):
      if endpoint.isPost, let key = request.idempotencyKey, core.reserve(key, owner: index) {
        reservation.withLock { $0 = key }
      }
      hold(at: gate) { [self] in proceed(endpoint, fault: nil) }
    default:
      proceed(endpoint, fault: fault)
    }
  }

  func proceed(_ endpoint: StripeEndpoint, fault: StripeTestServer.Fault?) {
    var stored: StripeTestServer.StoredServerError?
    if case .serverErrorStored(let kind) = fault { stored = kind }
    let executed = core.execute(endpoint, request, owner: index, requestID: requestID, storedServerError: stored)
    let response = core.response(
      status: executed.status, body: executed.body, request: request, requestID: requestID, extra: executed.headers)
    switch fault {
    case .delayAfterExecuting(let seconds):
      eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1_000_000_000))) { [self] in
        finish(.respond(response), status: executed.status, replayed: executed.replayed)
      }
    case .resetAfterExecuting:
      finish(.reset, status: 0, replayed: executed.replayed)
    case .holdAfterExecuting(let gate):
      hold(at: gate) { [self] in
        finish(.respond(response), status: executed.status, replayed: executed.replayed)
      }
    default:
      finish(.respond(response), status: executed.status, replayed: executed.replayed)
    }
  }

  /// Waits at `gate`, then runs `released` (unless the connection closed meanwhile: see `abandon`).
  func hold(at gate: StripeTestServer.Gate, released: @escaping @Sendable () -> Void) {
    let open = phase.withLock { phase -> Bool in
      guard phase != .done else { return false }
      phase = .held
      return true
    }
    guard open else { return }
    gate.arrive()
    gate.whenReleased { [self] in
      let go = phase.withLock { phase -> Bool in
        guard phase == .held else { return false }
        phase = .running
        return true
      }
      if go { released() }
    }
  }

  /// The client's connection closed before the answer: nothing more is sent. A request still
  /// held before executing is dropped unexecuted and gives its Idempotency-Key back.
  func abandon() {
    let previous = phase.withLock { phase -> Phase in
      defer { phase = .done }
      return phase
    }
    guard previous != .done else { return }
    if previous == .held, let key = reservation.withLock({ $0 }) { core.unreserve(key, owner: index) }
    promise.succeed(.drop)
  }

  func answer(_ error: StripeAPIError, extra: [(String, String)] = []) {
    let response = core.response(
      status: error.status, body: error.body.rendered, request: request, requestID: requestID, extra: extra)
    finish(.respond(response), status: error.status, replayed: false)
  }

  func finish(_ outcome: StripeOutcome, status: Int, replayed: Bool) {
    let first = phase.withLock { phase -> Bool in
      guard phase != .done else { return false }
      phase = .done
      return true
    }
    guard first else { return }
    let latency = core.state.withLock { state -> Int in
      state.requests[index].status = status
      state.requests[index].replayed = replayed
      return state.latencyMilliseconds
    }
    if case .respond = outcome, latency > 0 {
      core.state.withLock { state in
        state.delayedAnswers += 1
        state.peakDelayedAnswers = max(state.peakDelayedAnswers, state.delayedAnswers)
      }
      eventLoop.scheduleTask(in: .milliseconds(Int64(latency))) { [promise, core] in
        core.state.withLock { $0.delayedAnswers -= 1 }
        promise.succeed(outcome)
      }
    } else {
      promise.succeed(outcome)
    }
  }
}
