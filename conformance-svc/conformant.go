package conformancesvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
)

var (
	flagBody      = []byte(`{"success":true}`)
	nameBody      = []byte(`{"name":"Success!"}`)
	personBody    = []byte(`{"id":"123","name":"Alice","age":30}`)
	idInvalidBody = []byte(`{"error":"Invalid input: id must be an integer"}`)
)

// validJSON is endpoint 5 with its defect switched off.
func validJSON(w http.ResponseWriter, _ *http.Request) { respond.JSON(w, http.StatusOK, flagBody) }

// nameAsJSON is endpoint 6 with its defect switched off.
func nameAsJSON(w http.ResponseWriter, _ *http.Request) { respond.JSON(w, http.StatusOK, nameBody) }

// wholePerson is endpoint 7 with its defect switched off.
func wholePerson(w http.ResponseWriter, _ *http.Request) { respond.JSON(w, http.StatusOK, personBody) }

// itemByInteger is endpoint 8 with its defect switched off: the id is read as
// the contract's integer, and an id with no item is 404, which the corrected
// contract declares.
func itemByInteger(w http.ResponseWriter, r *http.Request) {
	id, ok := reqparse.QueryFirst(r.URL.RawQuery, "id")
	if !ok {
		respond.JSON(w, http.StatusBadRequest, idRequiredBody)
		return
	}
	n, ok := reqparse.ParseStrictInt(id)
	if !ok {
		respond.JSON(w, http.StatusBadRequest, idInvalidBody)
		return
	}
	message, found := items[n.String()] // the canonical text: 00 and -0 are 0
	if !found {
		respond.JSON(w, http.StatusNotFound, notFoundBody)
		return
	}
	respond.Value(w, http.StatusOK, messageBody{Message: message})
}
