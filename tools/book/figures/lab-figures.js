// Draw every stored plotly figure of the page: its JSON is in the script element inside each .lab-figure.
for (const box of document.querySelectorAll(".lab-figure")) {
    const figure = JSON.parse(box.querySelector('script[type="application/json"]').textContent);
    const layout = {...figure.layout, autosize: true};
    delete layout.width;
    Plotly.newPlot(box, figure.data, layout, {responsive: true, displaylogo: false});
}
