import Foundation
import NIOCore
import Synchronization

/// A request as the HTTP layer hands it over.
struct AdyenIncomingRequest: Sendable {
  var method: String
  var path: String
  var apiKey: String?
  var idempotencyKey: String?
  var body: String
}

/// A response ready to write.
struct AdyenHTTPResponse: Sendable {
  var status: Int
  var headers: [(String, String)]
  var body: String
}

/// What the HTTP layer does with a request's connection.
enum AdyenOutcome: Sendable {
  case respond(AdyenHTTPResponse)
  /// Reset the connection without answering.
  case reset
  /// Nothing to answer: the connection is gone.
  case drop
}

/// The server's shared state and request processing, independent of the connection.
final class AdyenServerCore: Sendable {
  struct SavedResult: Sendable {
    var path: String
    var request: AdyenJSON
    var status: Int
    var body: String
  }

  enum IdempotencyEntry: Sendable {
    /// Reserved by a request that has not finished executing (held before executing).
    case inProgress(owner: Int)
    case saved(SavedResult)
  }

  struct State: Sendable {
    var ledger: AdyenTestLedger
    var faults: [(route: AdyenTestServer.Route, fault: AdyenTestServer.Fault)] = []
    var idempotency: [String: IdempotencyEntry] = [:]
    var requests: [AdyenTestServer.RecordedRequest] = []
    var latencyMilliseconds = 0
  }

  let apiKey: String
  let hmacKey: String
  let state: Mutex<State>

  init(apiKey: String, hmacKey: String, ledger: AdyenTestLedger) {
    self.apiKey = apiKey
    self.hmacKey = hmacKey
    state = Mutex(State(ledger: ledger))
  }

  /// Records the request and prepares its processing; `start()` the exchange, and its promise
  /// completes (on `eventLoop`) with what to do with the connection.
  func exchange(for request: AdyenIncomingRequest, eventLoop: any EventLoop) -> AdyenExchange {
    let index = state.withLock { state -> Int in
      state.requests.append(
        .init(
          method: request.method, path: request.path, idempotencyKey: request.idempotencyKey, replayed: false,
          status: 0, body: request.body))
      return state.requests.count - 1
    }
    return AdyenExchange(
      core: self, request: request, eventLoop: eventLoop, promise: eventLoop.makePromise(of: AdyenOutcome.self),
      index: index)
  }

  func takeFault(for route: AdyenTestServer.Route) -> AdyenTestServer.Fault? {
    state.withLock { state in
      guard let index = state.faults.firstIndex(where: { $0.route == .any || $0.route == route }) else { return nil }
      return state.faults.remove(at: index).fault
    }
  }

  /// The error with a pspReference of its own where Adyen gives one.
  func referenced(_ error: AdyenServiceError) -> AdyenServiceError {
    guard error.carriesReference, error.pspReference == nil else { return error }
    var error = error
    error.pspReference = state.withLock { $0.ledger.nextPSPReference() }
    return error
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

  /// Parsing, the idempotency layer, validation and the endpoint, atomically ("API idempotency",
  /// https://docs.adyen.com/development-resources/api-idempotency): a request whose key was seen
  /// with the same path and body gets the first answer again (status and body, byte for byte);
  /// with another path or body, 422 704; while the first is still in progress, 409 704 with
  /// `Transient-Error: true`. Answers from requests that began executing are saved under the key
  /// (a 422 for an invalid token or an unknown pspReference included); parse and validation
  /// errors are not. Keys are the server's own: Adyen keeps them per company account, and the
  /// server is one.
  func execute(
    _ endpoint: AdyenEndpoint, _ request: AdyenIncomingRequest, owner: Int, tamper: AdyenTestServer.Tamper?
  ) -> Executed {
    func fail(_ error: AdyenServiceError) -> Executed {
      Executed(status: error.status, body: error.body.rendered, headers: error.headers, replayed: false)
    }
    let body: AdyenJSON
    do {
      body = try AdyenJSON.parse(request.body)
    } catch {
      return fail(.unexpectedInput("Unexpected input: \(error.found)"))
    }
    guard body.members != nil else { return fail(.unexpectedInput("Unexpected input: expected an object")) }
    if let unknown = endpoint.unknownFields(body) { return fail(.unexpectedInput(unknown)) }
    let key = request.idempotencyKey
    let executed = state.withLock { state -> Executed in
      if let key, let entry = state.idempotency[key] {
        switch entry {
        case .inProgress(let current) where current != owner: return fail(.idempotencyInProgress)
        case .inProgress: break
        case .saved(let saved):
          guard saved.path == request.path, saved.request.sameContent(as: body) else {
            return fail(.idempotencyKeyReused)
          }
          return Executed(status: saved.status, body: saved.body, headers: [], replayed: true)
        }
      }
      func notSaved(_ error: AdyenServiceError) -> Executed {
        var error = error
        if error.carriesReference { error.pspReference = state.ledger.nextPSPReference() }
        if let key, case .inProgress(owner) = state.idempotency[key] { state.idempotency[key] = nil }
        return fail(error)
      }
      let result: Result<AdyenJSON, AdyenServiceError>
      var success = 200
      switch endpoint {
      case .payments:
        switch state.ledger.validatePayment(body) {
        case .failure(let error): return notSaved(error)
        case .success(let input): result = state.ledger.createPayment(input, idempotencyKey: key)
        }
      case .captures(let psp), .cancels(let psp), .refunds(let psp):
        let kind: AdyenTestLedger.Modification.Kind =
          switch endpoint {
          case .captures: .capture
          case .cancels: .cancel
          default: .refund
          }
        success = 201
        switch state.ledger.validateModification(kind, body) {
        case .failure(let error): return notSaved(error)
        case .success(let input): result = state.ledger.modify(kind, payment: psp, input, idempotencyKey: key)
        }
      }
      let (status, text, headers): (Int, String, [(String, String)]) =
        switch result {
        case .success(let json): (success, json.rendered, [])
        case .failure(let error): (error.status, error.body.rendered, error.headers)
        }
      if let key {
        state.idempotency[key] = .saved(SavedResult(path: request.path, request: body, status: status, body: text))
      }
      return Executed(status: status, body: text, headers: headers, replayed: false)
    }
    guard let tamper, !executed.replayed, executed.status < 300 else { return executed }
    return Executed(
      status: executed.status, body: Self.tampered(executed.body, tamper), headers: executed.headers, replayed: false)
  }

  /// The answer with one value changed (`Fault.tamper`): `amount.value`, `amount.currency`, or the
  /// reference (`merchantReference` of a payment, `reference` of a modification). A member the
  /// answer does not have is left out.
  static func tampered(_ body: String, _ tamper: AdyenTestServer.Tamper) -> String {
    guard case .object(var members) = try? AdyenJSON.parse(body) else { return body }
    for index in members.indices {
      switch (members[index].0, tamper) {
      case ("amount", .amount(let value)):
        if case .object(let amount) = members[index].1 {
          members[index].1 = .object(amount.map { $0.0 == "value" ? ($0.0, .int(value)) : $0 })
        }
      case ("amount", .currency(let currency)):
        if case .object(let amount) = members[index].1 {
          members[index].1 = .object(amount.map { $0.0 == "currency" ? ($0.0, .string(currency)) : $0 })
        }
      case ("merchantReference", .reference(let reference)), ("reference", .reference(let reference)):
        members[index].1 = .string(reference)
      default: break
      }
    }
    return AdyenJSON.object(members).rendered
  }

  /// Adyen's headers around a body: JSON, the request's Idempotency-Key echoed ("To verify that a
  /// request was processed idempotently, check the Idempotency-Key HTTP header returned in the
  /// response"), and the answer's pspReference as the `pspReference` header.
  func response(status: Int, body: String, request: AdyenIncomingRequest, extra: [(String, String)] = [])
    -> AdyenHTTPResponse
  {
    var headers: [(String, String)] = [("Content-Type", "application/json;charset=utf-8")]
    if let psp = (try? AdyenJSON.parse(body))?["pspReference"]?.string { headers.append(("pspReference", psp)) }
    if let key = request.idempotencyKey { headers.append(("Idempotency-Key", key)) }
    headers += extra
    return AdyenHTTPResponse(status: status, headers: headers, body: body)
  }
}

/// One request's way through the server: authentication, routing, faults, idempotency, the
/// endpoint, and the answer (after the configured latency).
final class AdyenExchange: Sendable {
  enum Phase: Sendable { case running, held, done }

  let core: AdyenServerCore
  let request: AdyenIncomingRequest
  let eventLoop: any EventLoop
  let promise: EventLoopPromise<AdyenOutcome>
  let index: Int
  let phase = Mutex(Phase.running)
  /// The Idempotency-Key this request reserved while held before executing.
  let reservation = Mutex<String?>(nil)

  init(
    core: AdyenServerCore, request: AdyenIncomingRequest, eventLoop: any EventLoop,
    promise: EventLoopPromise<AdyenOutcome>, index: Int
  ) {
    self.core = core
    self.request = request
    self.eventLoop = eventLoop
    self.promise = promise
    self.index = index
  }

  /// Authentication ("API credentials": the `X-API-Key` header; a missing or wrong key is 401 with
  /// the generic-401 body), then the route (an unknown one is 404), then the route's fault.
  func start() {
    guard let key = request.apiKey, key == core.apiKey else { return answer(.unauthorized) }
    guard let endpoint = AdyenEndpoint(method: request.method, path: request.path) else {
      return answer(
        AdyenServiceError(
          status: 404, errorCode: "000", message: "HTTP Status Response - Not Found", errorType: "validation"))
    }
    let fault = core.takeFault(for: endpoint.route)
    switch fault {
    case .rateLimited: answer(.tooManyRequests)
    case .serverErrorBeforeExecuting: answer(core.referenced(.internalError))
    case .holdBeforeExecuting(let gate):
      if let key = request.idempotencyKey, core.reserve(key, owner: index) { reservation.withLock { $0 = key } }
      hold(at: gate) { [self] in proceed(endpoint, fault: nil) }
    default:
      proceed(endpoint, fault: fault)
    }
  }

  func proceed(_ endpoint: AdyenEndpoint, fault: AdyenTestServer.Fault?) {
    var tamper: AdyenTestServer.Tamper?
    if case .tamper(let change) = fault { tamper = change }
    let executed = core.execute(endpoint, request, owner: index, tamper: tamper)
    let response = core.response(
      status: executed.status, body: executed.body, request: request, extra: executed.headers)
    switch fault {
    case .delayAfterExecuting(let seconds):
      eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1_000_000_000))) { [self] in
        finish(.respond(response), status: executed.status, replayed: executed.replayed)
      }
    case .resetAfterExecuting:
      finish(.reset, status: 0, replayed: executed.replayed)
    case .holdAfterExecuting(let gate):
      hold(at: gate) { [self] in finish(.respond(response), status: executed.status, replayed: executed.replayed) }
    default:
      finish(.respond(response), status: executed.status, replayed: executed.replayed)
    }
  }

  /// Waits at `gate`, then runs `released` (unless the connection closed meanwhile: see `abandon`).
  func hold(at gate: AdyenTestServer.Gate, released: @escaping @Sendable () -> Void) {
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

  func answer(_ error: AdyenServiceError) {
    let response = core.response(
      status: error.status, body: error.body.rendered, request: request, extra: error.headers)
    finish(.respond(response), status: error.status, replayed: false)
  }

  func finish(_ outcome: AdyenOutcome, status: Int, replayed: Bool) {
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
      eventLoop.scheduleTask(in: .milliseconds(Int64(latency))) { [promise] in promise.succeed(outcome) }
    } else {
      promise.succeed(outcome)
    }
  }
}
