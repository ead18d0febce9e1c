// Restfold's interactive API documentation: Swagger UI, reading the service's
// own OpenAPI document. The base layout has no top bar (no third-party logo,
// and no inline style the page's CSP would refuse); the document's components
// (every named schema) are listed below the operations.
'use strict';
/* global SwaggerUIBundle -- Swagger UI's bundle, loaded by the page before this script */

// An API with versions: each version's document (its own URL under the path scheme), or what its
// requests carry to name it (an Accept parameter, a query parameter); empty for an API without.
const VERSIONS = JSON.parse('__VERSIONS__');

window.onload = function () {
  const options = {
    url: new URL('__DOCUMENT_PATH__', window.location.href).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 1,
    validatorUrl: null,
  };
  // The version the page's ?version= names, if the API has it: its document, and every request naming it.
  const asked = new URLSearchParams(window.location.search).get('version');
  const version = asked !== null && Object.prototype.hasOwnProperty.call(VERSIONS, asked) ? VERSIONS[asked] : undefined;
  if (version) {
    if (version.url) options.url = new URL(version.url, window.location.href).href;
    options.requestInterceptor = (request) => {
      if (version.accept) request.headers.Accept = version.accept;
      if (version.query) request.url += (request.url.includes('?') ? '&' : '?') + version.query;
      return request;
    };
  }
  window.ui = SwaggerUIBundle(options);
};
