package conformancesvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
)

var (
	malformedBody        = []byte(`{success: true}`)
	plainTextBody        = []byte(`Success!`)
	personWithoutAgeBody = []byte(`{"id":"123","name":"Alice"}`)
)

// malformedJSON is endpoint 5 as planted.
func malformedJSON(w http.ResponseWriter, r *http.Request) {
	// DEFECT(CONF-01): labelled application/json, but the property name is
	// not quoted, so no JSON parser accepts it.
	observe.Triggered(w, r)
	respond.Raw(w, http.StatusOK, respond.ContentTypeJSON, malformedBody)
}

// plainText is endpoint 6 as planted.
func plainText(w http.ResponseWriter, r *http.Request) {
	// DEFECT(CONF-02): the contract promises application/json with a name;
	// this is plain text, on every request.
	observe.Triggered(w, r)
	respond.Raw(w, http.StatusOK, "text/plain", plainTextBody)
}

// personWithoutAge is endpoint 7 as planted.
func personWithoutAge(w http.ResponseWriter, r *http.Request) {
	// DEFECT(CONF-03): Person requires id, name and age; age is missing.
	observe.Triggered(w, r)
	respond.JSON(w, http.StatusOK, personWithoutAgeBody)
}

// itemByText is endpoint 8 as planted: the id is looked up as it is
// written.
func itemByText(w http.ResponseWriter, r *http.Request) {
	id, ok := reqparse.QueryFirst(r.URL.RawQuery, "id")
	if !ok {
		respond.JSON(w, http.StatusBadRequest, idRequiredBody)
		return
	}
	message, found := items[id]
	if !found {
		// DEFECT(CONF-04): 404 is not among the declared responses (200, 400).
		observe.Triggered(w, r)
		respond.JSON(w, http.StatusNotFound, notFoundBody)
		return
	}
	respond.Value(w, http.StatusOK, messageBody{Message: message})
}
