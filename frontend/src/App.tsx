// Layout and routes. Hash routing: the API serves the build as static files (no fallback needed).
import { createHashRouter, NavLink, Outlet } from "react-router";
import { RouterProvider } from "react-router/dom";
import { useHealth } from "./api/queries";
import { AdminPage } from "./pages/AdminPage";
import { HeadToHeadPage } from "./pages/HeadToHeadPage";
import { LeaderboardPage } from "./pages/LeaderboardPage";
import { MatchesPage } from "./pages/MatchesPage";
import { MatchPage } from "./pages/MatchPage";
import { ModelPage } from "./pages/ModelPage";
import { TasksPage } from "./pages/TasksPage";
import { TournamentPage } from "./pages/TournamentPage";
import { TournamentsPage } from "./pages/TournamentsPage";

type Check = { ok?: boolean; reason?: string | null };

function HealthBanner() {
  const health = useHealth();
  if (health.isPending) return null;
  if (health.error) {
    return <div className="banner down" role="alert">The Arena API cannot be reached: pages cannot load until the server is back.</div>;
  }
  if (health.data.ok) return null;
  const body = (health.data.body ?? {}) as Record<string, unknown>;
  const down = ["postgres", "redis", "docker"]
    .map((k) => [k, body[k] as Check | undefined] as const)
    .filter(([, c]) => c && c.ok === false)
    .map(([k, c]) => `${k}: ${c?.reason ?? "down"}`);
  return (
    <div className="banner down" role="alert">
      The Arena service is degraded{down.length ? `: ${down.join("; ")}` : ""}.
    </div>
  );
}

const NAV = [
  ["/", "Leaderboard"],
  ["/head-to-head", "Head-to-head"],
  ["/tournaments", "Tournaments"],
  ["/matches", "Matches"],
  ["/tasks", "Tasks"],
  ["/admin", "Admin"],
] as const;

function Layout() {
  return (
    <>
      <a className="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>Skip to content</a>
      <header>
        <span className="brand">Arena</span>
        <nav aria-label="Pages">
          {NAV.map(([to, label]) => (
            <NavLink key={to} to={to} end={to === "/"}>{label}</NavLink>
          ))}
        </nav>
      </header>
      <HealthBanner />
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}

function NotFound() {
  return <p className="state empty">No such page.</p>;
}

const router = createHashRouter([
  {
    element: <Layout />,
    children: [
      { path: "/", element: <LeaderboardPage /> },
      { path: "/head-to-head", element: <HeadToHeadPage /> },
      { path: "/models/:name", element: <ModelPage /> },
      { path: "/tournaments", element: <TournamentsPage /> },
      { path: "/tournaments/:id", element: <TournamentPage /> },
      { path: "/matches", element: <MatchesPage /> },
      { path: "/matches/:id", element: <MatchPage /> },
      { path: "/tasks", element: <TasksPage /> },
      { path: "/admin", element: <AdminPage /> },
      { path: "*", element: <NotFound /> },
    ],
  },
]);

export function App() {
  return <RouterProvider router={router} />;
}
