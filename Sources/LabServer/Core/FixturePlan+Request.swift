import NIOHTTP1

extension FixturePlan.Ask {
    /// The fields of a request's head that the plan reads.
    init(_ headers: HTTPHeaders, hopsLeft: Int?) {
        self.init(range: headers.first(name: "Range"), ifRange: headers.first(name: "If-Range"),
                  ifNoneMatch: headers["If-None-Match"], ifModifiedSince: headers["If-Modified-Since"],
                  acceptEncoding: headers[canonicalForm: "Accept-Encoding"].map(String.init), hopsLeft: hopsLeft)
    }
}
