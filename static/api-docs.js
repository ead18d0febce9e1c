// Restfold's interactive API documentation: Swagger UI, reading the service's
// own OpenAPI document. The base layout has no top bar (no third-party logo,
// and no inline style the page's CSP would refuse); the document's components
// (every named schema) are listed below the operations.
'use strict';
/* global SwaggerUIBundle -- Swagger UI's bundle, loaded by the page before this script */

window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: new URL('__DOCUMENT_PATH__', window.location.href).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 1,
    validatorUrl: null,
  });
};
