package server

import "net/http"

const sessionCookie = "aimeter_session"

func (s *Server) dashboardRoutes(m *http.ServeMux) {}
